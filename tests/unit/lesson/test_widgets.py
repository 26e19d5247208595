import matplotlib

matplotlib.use("Agg")
import ipywidgets as widgets  # noqa: E402

from tfperf.lesson.widgets import ExperimentPanel  # noqa: E402


def make_panel(experiment):
    drawn = []
    panel = ExperimentPanel(
        experiment,
        {"n": widgets.IntSlider(value=3, min=1, max=10)},
        lambda fig, runs: drawn.append([r.label for r in runs]),
        title="test",
    )
    return panel, drawn


def test_runs_accumulate_and_are_all_plotted():
    def experiment(n, progress):
        for i in range(n):
            progress(i + 1, n)
        return [{"x": i, "y": i * i} for i in range(n)]

    panel, drawn = make_panel(experiment)
    first = panel.run()
    panel.controls["n"].value = 5
    second = panel.run()
    assert len(first.records) == 3 and len(second.records) == 5 and second.settings == {"n": 5}
    assert drawn == [["run 1"], ["run 1", "run 2"]]
    assert panel.progress.value == panel.progress.max == 5
    assert "Done: run 2" in panel.status.value
    assert not panel.run_button.disabled
    panel.clear()
    assert panel.runs == []


def test_a_failing_experiment_is_reported_in_the_panel():
    def experiment(n, progress):
        raise ValueError("array too large for this device")

    panel, drawn = make_panel(experiment)
    assert panel.run() is None
    assert "array too large" in panel.status.value
    assert drawn == [] and not panel.run_button.disabled


def test_clicking_run_runs_the_experiment():
    panel, drawn = make_panel(lambda n, progress: [{"n": n}])
    panel.run_button.click()
    assert len(panel.runs) == 1


def test_the_status_line_names_settings_by_the_controls_labels():
    controls = {
        "every": widgets.IntSlider(value=20, description="N"),
        "strategies": widgets.SelectMultiple(options=("a", "b", "c"), value=("a", "b"), description="loops"),
        "asynchronous": widgets.Checkbox(value=True, description="asynchronous eager"),
        "unlabelled": widgets.IntSlider(value=1),
    }
    panel = ExperimentPanel(lambda progress, **settings: [{"x": 1}], controls, lambda fig, runs: None)
    panel.run()
    status = panel.status.value
    assert "N=20" in status and "loops=a/b" in status and "asynchronous eager on" in status and "unlabelled=1" in status
    assert "every=" not in status and "strategies=" not in status


def test_what_the_experiment_prints_is_shown_under_the_plot_not_lost(capsys):
    def experiment(n, progress):
        print(f"same as the naive pipeline: {n == 3}")
        return [{"x": 1, "y": 1}]

    panel, drawn = make_panel(experiment)
    panel.run()
    assert panel.printed == "same as the naive pipeline: True\n"
    # redrawn inside the panel's output area (outside a kernel that is this process's stdout)
    assert capsys.readouterr().out.endswith("run 1: same as the naive pipeline: True\n")
    panel.clear()
    assert panel.printed == ""
