"""Each chapter's experiment panel in a real JupyterLab and Chromium, as a learner meets it:
setup cell, the cells up to the panel, two runs with a control changed in between; and a Check
cell's failure message on the untouched student version. Screenshots: test-artifacts/browser/."""

from __future__ import annotations

import shutil
import time

import pytest

from tests.browser.conftest import start_lab, stop_lab
from tests.browser.notebook_page import NotebookPage
from tests.conftest import REPO
from tests.learner_path import EXERCISES, reference_answer


def keep_two_choices(label: str):
    """Keep only the first two choices of a multiple-choice list, as a learner would."""

    def change(panel) -> str:
        chooser = panel.locator(".widget-select-multiple", has_text=label).locator("select")
        options = chooser.locator("option").all_inner_texts()
        assert len(options) >= 2
        chooser.select_option(label=options[:2])
        return f"{label}="

    return change


def toggle(label: str):
    """Tick (or untick) a checkbox."""

    def change(panel) -> str:
        box = panel.locator(".widget-checkbox", has_text=label).locator("input[type=checkbox]")
        was = box.is_checked()
        box.click()
        return f"{label} {'off' if was else 'on'}"

    return change


def slide_left(label: str, key: str = "ArrowLeft"):
    """Move a slider one step down with the keyboard (its handle has the focus after a click)."""

    def change(panel) -> str:
        slider = panel.locator(".widget-slider", has_text=label)
        before = slider.locator(".widget-readout").inner_text().strip()
        slider.locator(".noUi-handle").first.focus()
        slider.page.keyboard.press(key)
        after = slider.locator(".widget-readout").inner_text().strip()
        assert after != before, f"the slider {label!r} did not move"
        return f"{label}={after}"

    return change


def slide_right(label: str):
    """Move a slider one step up with the keyboard."""
    return slide_left(label, "ArrowRight")


# chapter notebook, how the test changes a control (it returns what the status line must then say),
# a parameter name the status line must not use (it names the controls by their labels), what the
# experiment prints, which must show under the plot after the second run (not in JupyterLab's log console),
# and, for a chapter's later panel, text of its cell (default: the chapter's first panel)
CHAPTERS = [
    ("01_tensors/tensors_and_devices.ipynb", keep_two_choices("strategies"), None, None),
    ("02_eager_vs_graph/eager_vs_graph.ipynb", keep_two_choices("modes"), "max_width=", "run 2: fastest: "),
    ("03_keras_fit/keras_fit.ipynb", slide_left("max N"), "max_spe=", "run 2: fastest: "),
    (
        "04_tf_data/tf_data_pipelines.ipynb",
        toggle("vectorized (batch first)"),
        "vectorized on",
        "run 2: parallel + vectorized + cache before augment + prefetch: same as the naive pipeline: True",
    ),
    ("05_gpu_sync/gpu_sync_pitfalls.ipynb", keep_two_choices("loops"), "every=", None),
    ("06_device_ceilings/device_ceilings.ipynb", toggle("compile with XLA"), "xla=", None),
    ("06_device_ceilings/device_ceilings.ipynb", slide_right("width"), "max_batch=", None, "run_memory"),
    ("07_beyond_one_device/beyond_one_device.ipynb", slide_left("per replica"), "per_replica=", None),
    ("08_capstone/capstone.ipynb", keep_two_choices("pitfalls"), "kept=", None),
]
FIRST_PANEL = "ExperimentPanel("


def chapter_id(case) -> str:
    return case[0].split("/")[0] + (f"-{case[4]}" if len(case) > 4 else "")


def wait_for_run(panel, number: int, timeout_ms: int = 240_000) -> str:
    """Wait until the panel says run ``number`` is done; return the status line."""
    status = panel.locator(".widget-html", has_text=f"Done: run {number}")
    status.wait_for(timeout=timeout_ms)
    return status.inner_text()


def run_all_to_the_end(nb: NotebookPage) -> None:
    """Run All on the untouched notebook reaches its last cell: every code cell ran, and the only failures shown are
    the Checks saying an exercise is not written yet."""
    nb.run_all()
    counts = nb.execution_counts()
    assert None not in counts, f"Run All stopped: code cells not run: {[i for i, c in enumerate(counts) if c is None]}"
    for index, cell in enumerate(nb.cells()):
        for error in nb.errors(index) if cell["type"] == "code" else []:
            assert "not written yet" in error, (cell["grade_id"], error)


def commit_a_prediction(nb: NotebookPage) -> None:
    """Choose a range in the chapter's first prediction widget and commit it (the widget's messages reach the
    kernel: JupyterLab opens the widgets' comm, over a subshell where its settings say so)."""
    ask = nb.index(containing="predictions.ask(")
    widget = nb.cell(ask).locator(".jp-OutputArea .widget-vbox").first
    widget.scroll_into_view_if_needed()
    widget.locator(".widget-radio-box label").first.click()
    widget.locator("button", has_text="Commit my prediction").click()
    widget.locator(".widget-html", has_text="Saved: ").wait_for(timeout=20_000)


def answer_and_check(nb: NotebookPage, chapter: str, artifacts) -> str:
    """After a reload: the exercise's given cell run again, the reference answer written and run, then its speed
    Check, which must pass. Returns what the Check printed."""
    given, answer, check = EXERCISES[chapter]
    nb.run(nb.index(grade_id=given))  # run again: harmless
    answer_cell = nb.index(grade_id=answer)
    nb.set_source(answer_cell, reference_answer(chapter, answer))
    nb.run(answer_cell)
    assert nb.errors(answer_cell) == []
    check_cell = nb.index(grade_id=check)
    nb.run(check_cell)
    nb.cell(check_cell).scroll_into_view_if_needed()
    nb.cell(check_cell).screenshot(path=str(artifacts / f"{chapter}-reference-speed-check-after-reload.png"))
    assert nb.errors(check_cell) == [], nb.errors(check_cell)
    return nb.output_text(check_cell)


@pytest.mark.parametrize(
    "notebook, change, parameter_name, printed, panel_text",
    [(*c, FIRST_PANEL)[:5] for c in CHAPTERS],
    ids=[chapter_id(c) for c in CHAPTERS],
)
def test_a_learners_walk_through_the_chapter(
    page, learner_lab, artifacts, notebook, change, parameter_name, printed, panel_text
):
    """As a learner meets a chapter in JupyterLab as ``make lab`` sets it up: Run All on the untouched notebook
    reaches the end; the experiment panel runs twice and keeps both runs; a prediction is committed; after a reload
    of the page, the given cell run again, the reference answer of an exercise and its speed Check pass. (A chapter's
    later panel: the cells above it, then the panel alone.)"""
    chapter = notebook.split("/")[0]
    walk = panel_text == FIRST_PANEL
    if walk:  # a copy of its own: the walk saves the notebook, which the other tests open untouched
        (learner_lab.root / "walks" / chapter).mkdir(parents=True, exist_ok=True)
        shutil.copy(learner_lab.root / notebook, learner_lab.root / "walks" / notebook)
        notebook = f"walks/{notebook}"
    nb = NotebookPage(page, learner_lab, notebook).open()
    panel_cell = nb.index(containing=panel_text)
    if walk:
        run_all_to_the_end(nb)
        panel = nb.cell(panel_cell).locator(".jp-OutputArea .widget-vbox").first
        panel.wait_for(timeout=30_000)
    else:
        panel = nb.run_widget_cell(panel_cell)  # the setup cell first, then everything the panel needs
    assert "Computing on" in nb.output_text(nb.index(grade_id="setup"))
    run_button = panel.locator("button", has_text="Run")
    if not panel.locator(".widget-html", has_text="Done: run 1").count():  # a panel may make its first run itself
        run_button.click()
    wait_for_run(panel, 1)
    first_plot = panel.locator(".widget-output img").first
    first_plot.wait_for(timeout=60_000)
    first_src = first_plot.get_attribute("src")

    expected_status = change(panel)  # change a control, as a learner would
    run_button.click()
    status = wait_for_run(panel, 2)
    progress = panel.locator(".widget-hprogress .progress-bar").first
    assert progress.evaluate("el => el.style.width") in ("100%", "100.0%")

    # the status line uses the controls' labels; the plot was redrawn, and the panel kept both runs
    assert expected_status in status, status
    if parameter_name:
        assert parameter_name not in status
    plots = panel.locator(".widget-output img")
    deadline = time.time() + 60  # the status line says "Done" just before the plot is redrawn
    while plots.count() != 1 or plots.first.get_attribute("src") == first_src:
        assert time.time() < deadline, "the plot was not redrawn after the second run"
        page.wait_for_timeout(250)
    if printed:
        panel.locator(".widget-output", has_text=printed).wait_for(timeout=10_000)
    name = chapter + ("" if walk else f"-{panel_text}")
    panel.screenshot(path=str(artifacts / f"{name}-panel-after-two-runs.png"))
    if sum("ExperimentPanel(" in c["source"] for c in nb.cells()) == 1:  # else `panel` names the chapter's last one
        assert nb.add_cell_and_run("print([run.label for run in panel.runs])").strip() == "['run 1', 'run 2']"
    assert nb.widget_failures() == []
    if not walk:
        assert nb.stderr_outputs() == []
        return

    commit_a_prediction(nb)
    nb.reload()
    shown = answer_and_check(nb, chapter, artifacts)
    assert shown.strip(), "the Check printed nothing"


@pytest.fixture
def stock_lab(tmp_path, artifacts):
    """JupyterLab with its own default for widget messages (``commsOverSubshells: perCommTarget``, a kernel subshell
    per comm target), as a learner who installed the course into their own JupyterLab has it."""
    root = tmp_path / "work"
    (root / "05_gpu_sync").mkdir(parents=True)
    shutil.copy(REPO / "notebooks" / "05_gpu_sync" / "gpu_sync_pitfalls.ipynb", root / "05_gpu_sync")
    kernels = "@jupyterlab/apputils-extension/kernels-settings.jupyterlab-settings"
    lab = start_lab(
        root,
        artifacts / "stock-lab.log",
        cwd=root,
        user_settings={kernels: '{"commsOverSubshells": "perCommTarget"}\n'},
    )
    yield lab
    stop_lab(lab)


def test_a_speed_check_passes_after_a_widget_where_widget_messages_use_a_kernel_subshell(stock_lab, page, artifacts):
    """With JupyterLab's own default, the first widget makes the kernel start a subshell thread after the setup
    cell: the reference answer's speed Check still passes, after a reload too."""
    nb = NotebookPage(page, stock_lab, "05_gpu_sync/gpu_sync_pitfalls.ipynb").open()
    run_all_to_the_end(nb)
    commit_a_prediction(nb)
    threads = nb.add_cell_and_run(
        "import threading\nprint(sum(t.name.startswith('subshell-') for t in threading.enumerate()))"
    )
    assert int(threads.strip()) >= 1, "no kernel subshell was started: the test would prove nothing"
    nb.reload()
    assert answer_and_check(nb, "05_gpu_sync", artifacts).strip()


def test_a_check_cell_on_the_untouched_exercise_shows_a_short_message(page, learner_lab, artifacts):
    nb = NotebookPage(page, learner_lab, "01_tensors/tensors_and_devices.ipynb").open()
    nb.run(nb.index(grade_id="setup"))
    for index in (
        nb.index(containing="import tensorflow as tf"),
        nb.index(grade_id="weighted_mean"),
        nb.index(grade_id="weighted_mean_tests"),
    ):
        nb.run(index)
    check = nb.index(grade_id="weighted_mean_tests")
    nb.cell(check).scroll_into_view_if_needed()
    nb.cell(check).screenshot(path=str(artifacts / "01_tensors-check-cell-unwritten.png"))
    shown = nb.cell(check).locator(".jp-OutputArea").inner_text()
    assert "Check failed: weighted_mean([1, 2, 3], [0.5, 0.25, 0.25]) is not written yet" in shown
    assert 'Reread the section "2. Dtypes do not mix".' in shown
    assert "Traceback" not in shown and "tfperf" not in shown and "File " not in shown
    assert len(shown.strip().splitlines()) <= 3


def test_a_reopened_notebook_still_shows_the_panel_and_its_last_plot(page, learner_lab, artifacts):
    # Run the panel, save, then open the notebook again with a new kernel (as after a restart of
    # `make lab`): the saved notebook must show the panel and its plot, with no widget error.
    notebook = "01_tensors/tensors_and_devices.ipynb"
    nb = NotebookPage(page, learner_lab, notebook).open()
    panel_cell = nb.index(containing="ExperimentPanel(")
    panel = nb.run_widget_cell(panel_cell)
    panel.locator("button", has_text="Run").click()
    wait_for_run(panel, 1)
    panel.locator(".widget-output img").first.wait_for(timeout=60_000)
    page.evaluate("""async () => { await jupyterapp.commands.execute('docmanager:save');
        await jupyterapp.serviceManager.sessions.shutdownAll(); }""")

    nb = NotebookPage(page, learner_lab, notebook).open()  # a fresh page and a new kernel
    output = nb.cell(panel_cell).locator(".jp-OutputArea").first
    output.scroll_into_view_if_needed()
    deadline = time.time() + 30  # widgets render a moment after the notebook
    while output.locator("img").count() == 0 or nb.widget_failures():
        if time.time() > deadline:
            break
        page.wait_for_timeout(500)
    output.screenshot(path=str(artifacts / "01_tensors-panel-after-reopening.png"))
    assert nb.widget_failures() == []
    assert output.locator("img").count() >= 1, "the last plot is gone from the reopened notebook"


def test_a_prediction_committed_in_the_widget_is_shown_beside_the_measurement(page, learner_lab, artifacts):
    nb = NotebookPage(page, learner_lab, "02_eager_vs_graph/eager_vs_graph.ipynb").open()
    ask = nb.index(containing='predictions.ask("02_eager_vs_graph.graph_vs_eager"')
    widget = nb.run_widget_cell(ask)
    widget.locator("label", has_text="3x to 10x").click()
    widget.locator("button", has_text="Commit my prediction").click()
    widget.locator(".widget-html", has_text="Saved: 3x to 10x").wait_for(timeout=10_000)
    measure = nb.index(containing='predictions.reveal("02_eager_vs_graph.graph_vs_eager"')
    nb.run(measure)
    shown = nb.output_text(measure)
    widget.screenshot(path=str(artifacts / "02_eager_vs_graph-prediction-committed.png"))
    nb.cell(measure).screenshot(path=str(artifacts / "02_eager_vs_graph-prediction-beside-measurement.png"))
    assert "You predicted 3x to 10x; measured here:" in shown, shown
    assert nb.widget_failures() == [] and nb.stderr_outputs() == []
