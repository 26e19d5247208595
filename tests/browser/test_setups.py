"""The servers learners and instructors start: what they show at start-up, in a real browser."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import time
import urllib.request

import pytest

from tests.browser.conftest import TOKEN, free_port, start_lab, stop_lab
from tests.conftest import REPO, assignments

NBGRADER_NOISE = ("nbgrader_config.py", "exchange", "Error fetching courses", "Traceback", "[E ")


def test_learners_see_no_nbgrader_pages_or_errors(page, learner_lab):
    page.goto(learner_lab.page_url("lab"))
    page.locator(".lm-MenuBar-itemLabel", has_text="Kernel").first.wait_for()
    menus = page.locator(".lm-MenuBar-itemLabel").all_inner_texts()
    assert "File" in menus and "Nbgrader" not in menus  # no assignment list, course list or formgrader
    for path in ("formgrader", "assignments", "courses"):
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(f"{learner_lab.url}/{path}?token={TOKEN}", timeout=10)
        assert err.value.code == 404
    page.wait_for_timeout(1000)
    log = learner_lab.log.read_text()
    assert not [word for word in NBGRADER_NOISE if word in log], log[-3000:]


@pytest.fixture
def instructor_lab(tmp_path, artifacts):
    """JupyterLab as ``make instructor`` starts it, on a scratch copy of the course (the gradebook goes there)."""
    for folder in ("solutions", "notebooks"):
        shutil.copytree(REPO / folder, tmp_path / folder)
    (tmp_path / "autograde").mkdir()
    shutil.copy(REPO / "autograde" / "nbgrader_config.py", tmp_path / "autograde")
    env = dict(os.environ)
    env["JUPYTER_CONFIG_PATH"] = os.pathsep.join(
        filter(None, [str(REPO / "tools" / "jupyterlab" / "instructor"), env.get("JUPYTER_CONFIG_PATH", "")])
    )
    lab = start_lab(tmp_path, artifacts / "instructor-lab.log", cwd=tmp_path / "autograde", env=env)
    yield lab
    stop_lab(lab)


def test_formgrader_lists_the_assignments_and_its_links_open_real_folders(page, instructor_lab, artifacts):
    page.goto(instructor_lab.page_url("formgrader/manage_assignments"))
    rows = page.locator("tr", has=page.locator("a:has(.glyphicon-search)"))  # one row per assignment
    rows.first.wait_for(timeout=60_000)
    # Formgrader's "Current configuration" panel shows the configuration as JSON
    page.get_by_text("Current configuration").click()
    shown = page.locator("#collapseConfig pre")
    shown.wait_for()
    page.screenshot(path=str(artifacts / "formgrader-manage-assignments.png"), full_page=True)
    config = json.loads(shown.inner_text())
    assert "tfperf.autograding.preprocessors.GradingExecute" in config["Autograde"]["autograde_preprocessors"]
    assert "not serializable" not in instructor_lab.log.read_text()
    assert "exchange directory" not in page.locator("body").inner_text()  # Release and Collect work locally
    names = [row.locator("td").first.inner_text().strip() for row in rows.all()]
    assert sorted(names) == assignments()
    links = {}
    for row in rows.all():
        name = row.locator("td").first.inner_text().strip()
        source = row.locator("td").first.locator("a").get_attribute("href")
        preview = row.locator("a:has(.glyphicon-search)").get_attribute("href")
        links[name] = (source, preview)
    for name, (source, preview) in links.items():
        assert source.endswith(f"/../solutions/{name}") and preview.endswith(f"/../notebooks/{name}")
        for href, folder in ((source, "solutions"), (preview, "notebooks")):
            response = page.goto(f"{instructor_lab.url}{href}?token={TOKEN}")
            assert response.status == 200, href
            # the same folder as JupyterLab's file browser opens it (Formgrader inside JupyterLab)
            lab_path = href.removeprefix("/tree/")
            listing = json.load(
                urllib.request.urlopen(f"{instructor_lab.url}/api/contents/{lab_path}?token={TOKEN}", timeout=10)
            )
            files = {item["name"] for item in listing["content"]}
            assert files == {p.name for p in (REPO / folder / name).iterdir() if p.suffix == ".ipynb"}


ERROR_DIALOG = ".jp-Dialog"
BREADCRUMBS = ".jp-FileBrowser .jp-BreadCrumbs"


def formgrader_links(frame) -> list[tuple[str, str]]:
    """(assignment, link text or icon) of every link in Formgrader's assignment table."""
    rows = frame.locator("tr", has=frame.locator("a:has(.glyphicon-search)"))
    rows.first.wait_for(timeout=60_000)
    return [
        (row.locator("td").first.inner_text().strip(), index)
        for row in rows.all()
        for index in range(row.locator("a[href]").count())
    ]


def test_every_formgrader_link_opens_without_an_error_from_both_views(page, instructor_lab, artifacts):
    """Formgrader as its own page (links open new tabs) and inside JupyterLab (links move the file browser):
    each link of the assignment table opens its folder, and no error dialog appears. Every row has the
    same links, made by the same code: those of the first and the last assignment are opened (about 11 s
    an assignment), and every row is checked to have them."""
    page.goto(instructor_lab.page_url("lab"))
    page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").first.wait_for()
    # Formgrader as its own page
    page.goto(instructor_lab.page_url("formgrader/manage_assignments"))
    links = formgrader_links(page)
    assert len(links) >= 2 * len(assignments()), links  # a source and a preview link per assignment
    folder_links = []
    opened = {assignments()[0], assignments()[-1]}
    for name, index in links:
        if name not in opened:
            continue
        row = page.locator("tr", has=page.locator("td", has_text=name)).first
        link = row.locator("a[href]").nth(index)
        if link.get_attribute("target") != "_blank":
            continue  # an action of Formgrader's own page (generate, release...), not a link to a folder
        with page.context.expect_page() as new_tab:
            link.click()
        tab = new_tab.value
        tab.locator(BREADCRUMBS).first.wait_for(timeout=60_000)
        tab.wait_for_timeout(3000)  # the dialog, where there is one, comes after the page has loaded
        folder = tab.locator(BREADCRUMBS).first.inner_text()
        shot = artifacts / f"formgrader-page-link-{name}-{index}.png"
        tab.screenshot(path=str(shot))
        assert tab.locator(ERROR_DIALOG).count() == 0, (
            name,
            tab.url,
            tab.locator(ERROR_DIALOG).all_inner_texts(),
            shot,
        )
        assert folder.replace(" ", "").rstrip("/").endswith(name), (name, tab.url, folder)
        tab.close()
        folder_links.append((name, index))
    assert len(folder_links) == 2 * len(opened), folder_links
    for name in assignments():  # every row has its two folder links
        row = page.locator("tr", has=page.locator("td", has_text=name)).first
        assert sum(1 for a in row.locator("a[href]").all() if a.get_attribute("target") == "_blank") == 2, name
    # Formgrader inside JupyterLab (Nbgrader > Formgrader): links move the file browser
    page.goto(instructor_lab.page_url("lab"))
    page.wait_for_function("() => window.jupyterapp && jupyterapp.commands.hasCommand('nbgrader:open-formgrader')")
    page.evaluate("() => jupyterapp.commands.execute('nbgrader:open-formgrader')")
    frame = page.frame_locator("iframe")
    assert formgrader_links(frame) == links
    for name, index in folder_links:  # the same links, as Formgrader makes them inside JupyterLab
        row = frame.locator("tr", has=frame.locator("td", has_text=name)).first
        row.locator("a[href]").nth(index).click()
        page.wait_for_timeout(1500)
        folder = page.locator(BREADCRUMBS).first.inner_text()
        assert page.locator(ERROR_DIALOG).count() == 0, (name, page.locator(ERROR_DIALOG).all_inner_texts())
        assert folder.replace(" ", "").rstrip("/").endswith(name), (name, index, folder)
    page.screenshot(path=str(artifacts / "formgrader-in-lab.png"))


def test_make_instructor_prints_a_url_to_autograde_and_keeps_its_own_workspace(tmp_path):
    """``make instructor`` as an instructor runs it, after ``make lab`` left the learner's tabs in the
    default workspace: the URL it prints opens ``autograde/`` (its default_url), and its JupyterLab
    does not reopen the learner's tabs."""
    from jupyterlab_server.workspaces_handler import WorkspacesManager

    config_dir = tmp_path / "jupyter-config"  # the user's Jupyter configuration folder, with the learner's workspace
    learner_tab = "notebook:01_tensors/tensors_and_devices.ipynb"
    learner = {"data": {learner_tab: {"data": {"path": "01_tensors/tensors_and_devices.ipynb", "factory": "Notebook"}}}}
    WorkspacesManager(str(config_dir / "lab" / "workspaces")).save(
        "default", json.dumps({**learner, "metadata": {"id": "default"}})
    )
    port = free_port()
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(config_dir))
    args = f"--no-browser --ip=127.0.0.1 --port={port} --IdentityProvider.token={TOKEN}"
    log = tmp_path / "make-instructor.log"
    with open(log, "w") as out:
        make = subprocess.Popen(
            ["make", "instructor", f"LAB_ARGS={args}"],
            cwd=REPO,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 120
        while f":{port}/" not in log.read_text() and time.monotonic() < deadline and make.poll() is None:
            time.sleep(0.5)
        printed = re.findall(rf"http://127\.0\.0\.1:{port}(/\S*)", log.read_text())
        assert printed and all(url.startswith("/lab/tree/autograde?token=") for url in printed), log.read_text()
        workspace = json.load(
            urllib.request.urlopen(f"http://127.0.0.1:{port}/lab/api/workspaces/default?token={TOKEN}", timeout=10)
        )
        assert learner_tab not in workspace["data"], workspace
    finally:
        os.killpg(make.pid, signal.SIGTERM)
        make.wait(timeout=30)
