"""Real-browser tests: JupyterLab on loopback, from this environment, driven by Playwright in Debian's Chromium.

One server (the learner's set-up of ``make lab``, in a scratch copy of notebooks/) and one browser
for the whole session. Playwright never downloads a browser: it runs ``/usr/bin/chromium``.
Screenshots land in ``test-artifacts/browser/`` (git-ignored), or in ``$TFPERF_ARTIFACTS``.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import REPO

CHROMIUM = Path(os.environ.get("TFPERF_CHROMIUM", "/usr/bin/chromium"))
ARTIFACTS = Path(os.environ.get("TFPERF_ARTIFACTS", REPO / "test-artifacts")) / "browser"
TOKEN = "tfperf-browser-test"
CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    # no network here: nothing in the background may try to reach it
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-default-apps",
    "--disable-sync",
    "--no-first-run",
    "--metrics-recording-only",
    "--disable-breakpad",
]


def pytest_collection_modifyitems(items):
    for item in items:
        if item.path.is_relative_to(Path(__file__).parent):
            item.add_marker(pytest.mark.slow)
            item.add_marker(pytest.mark.browser)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Lab:
    """A running JupyterLab server."""

    def __init__(self, process: subprocess.Popen, url: str, root: Path, log: Path):
        self.process, self.url, self.root, self.log = process, url, root, log

    def page_url(self, path: str) -> str:
        """``path`` on this server; ``reset`` starts from an empty workspace (no notebook left open by an earlier test)."""
        return f"{self.url}/{path}?reset&token={TOKEN}"


def start_lab(
    root: Path,
    log: Path,
    *,
    cwd: Path,
    extra_args: list[str] = (),
    env: dict | None = None,
    user_settings: dict[str, str] | None = None,
) -> Lab:
    """JupyterLab on ``root``; ``user_settings``: more of the user's settings (a plugin's settings file, relative to
    the settings folder, and its JSON text), which win over ``overrides.json`` as a user's own settings do."""
    port = free_port()
    env = dict(env or os.environ)
    env.pop("MPLBACKEND", None)  # the notebooks' plots use the inline backend, as for a learner
    env.update(
        TFPERF_SIZE="ci",
        TF_CPP_MIN_LOG_LEVEL="3",
        JUPYTER_PLATFORM_DIRS="1",
        PYTHONPATH=os.pathsep.join(filter(None, [str(REPO / "src"), env.get("PYTHONPATH", "")])),
    )
    jupyter = Path(sys.executable).parent / "jupyter"
    settings = log.parent / f"lab-settings-{port}"
    # every cell in the page (JupyterLab otherwise renders only the cells in view), so tests can find them
    tracker = settings / "user-settings" / "@jupyterlab" / "notebook-extension" / "tracker.jupyterlab-settings"
    tracker.parent.mkdir(parents=True, exist_ok=True)
    tracker.write_text('{"windowingMode": "none"}\n')
    for name, text in (user_settings or {}).items():
        (settings / "user-settings" / name).parent.mkdir(parents=True, exist_ok=True)
        (settings / "user-settings" / name).write_text(text)
    cmd = [
        str(jupyter),
        "lab",
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={port}",
        f"--IdentityProvider.token={TOKEN}",
        f"--ServerApp.root_dir={root}",
        "--LabApp.expose_app_in_browser=True",
        f"--LabApp.workspaces_dir={settings / 'workspaces'}",
        f"--LabApp.user_settings_dir={settings / 'user-settings'}",
        *extra_args,
    ]
    if os.getuid() == 0:
        cmd.append("--allow-root")
    out = open(log, "w")
    process = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 90
    while time.time() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"JupyterLab exited:\n{log.read_text()}")
        try:
            urllib.request.urlopen(f"{url}/api/status?token={TOKEN}", timeout=2)
            return Lab(process, url, root, log)
        except OSError:
            time.sleep(0.5)
    process.terminate()
    raise RuntimeError(f"JupyterLab did not start in 90 s:\n{log.read_text()}")


def stop_lab(lab: Lab) -> None:
    lab.process.terminate()
    try:
        lab.process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        lab.process.kill()


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


@pytest.fixture(scope="session")
def learner_lab(tmp_path_factory, artifacts):
    """JupyterLab as ``make lab`` starts it: the learner's settings, on a fresh copy of the student notebooks."""
    root = tmp_path_factory.mktemp("my-work")
    for notebook in sorted((REPO / "notebooks").glob("*/*.ipynb")):
        (root / notebook.parent.name).mkdir(exist_ok=True)
        shutil.copy(notebook, root / notebook.parent.name / notebook.name)
    env = dict(os.environ)
    env["JUPYTER_CONFIG_PATH"] = os.pathsep.join(
        filter(None, [str(REPO / "tools" / "jupyterlab" / "learner"), env.get("JUPYTER_CONFIG_PATH", "")])
    )
    lab = start_lab(root, artifacts / "learner-lab.log", cwd=root, env=env)
    yield lab
    stop_lab(lab)


@pytest.fixture(scope="session")
def browser():
    if not CHROMIUM.is_file():
        pytest.skip(f"{CHROMIUM} is not installed (Debian: apt-get install -y chromium; .ci/run installs it)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright is not installed (it is pinned in requirements/lock.txt: run `make venv`)")
    os.environ.setdefault("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.when == "call":
        item.stash[FAILED] = report.failed
    return report


FAILED = pytest.StashKey[bool]()


@pytest.fixture
def page(browser, request, artifacts):
    """A fresh browser page; if the test fails, a screenshot of the whole page is kept as an artifact."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(60_000)
    yield page
    if request.node.stash.get(FAILED, False):
        name = "".join(c if c.isalnum() or c in "-_." else "_" for c in request.node.name)
        page.screenshot(path=str(artifacts / f"FAILED-{name}.png"), full_page=True)
    try:  # free the CPU for the next test: shut down the kernels this page started
        page.evaluate("async () => { if (window.jupyterapp) await jupyterapp.serviceManager.sessions.shutdownAll(); }")
    finally:
        context.close()
