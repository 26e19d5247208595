import matplotlib

matplotlib.use("Agg")

from tfperf import plots  # noqa: E402


def test_log_axes_are_labelled_with_plain_numbers():
    fig, (ax,) = plots.new_figure(1)
    records = [{"size": 0.01 * 4 ** i, "ms": 0.1 * 8 ** i, "kind": k} for i in range(6) for k in ("a", "b")]
    plots.plot_lines(ax, records, x="size", y="ms", group="kind", logx=True, logy=True)
    fig.canvas.draw()
    labels = {t.get_text() for t in ax.get_xticklabels() + ax.get_yticklabels()}
    assert {"0.01", "0.1", "1", "10"} <= labels
    assert not any("e-" in label or "10^" in label for label in labels)
    assert [line.get_label() for line in ax.get_lines()] == ["a", "b"]


def test_each_run_tells_runs_apart():
    class Run:
        def __init__(self, label):
            self.label = label
    one = list(plots.each_run([Run("run 1")]))
    assert one[0][1] == "" and one[0][2] == "-"
    two = list(plots.each_run([Run("run 1"), Run("run 2")]))
    assert [prefix for _, prefix, _ in two] == ["run 1: ", "run 2: "]
    assert two[0][2] != two[1][2]


def test_show_draws_one_run_or_several_on_a_new_figure(monkeypatch):
    import matplotlib.pyplot as plt

    shown, drawn = [], []
    monkeypatch.setattr(plt, "show", lambda: shown.append(plt.gcf()))
    draw = lambda fig, runs: drawn.append((fig, [r.label for r in runs]))  # noqa: E731
    plots.show(draw, plots.Run("this run", records=[{"x": 1}]))
    plots.show(draw, [plots.Run("a"), plots.Run("b")], figsize=(4, 3))
    assert [labels for _, labels in drawn] == [["this run"], ["a", "b"]]
    assert shown == [fig for fig, _ in drawn] and shown[0] is not shown[1]
    assert tuple(shown[1].get_size_inches()) == (4, 3)


def test_run_is_the_same_record_for_panels_and_plots():
    from tfperf import widgets

    assert widgets.Run is plots.Run
    run = plots.Run("run 1", {"n": 3}, [{"x": 1}])
    assert (run.label, run.settings, run.records) == ("run 1", {"n": 3}, [{"x": 1}])
