import matplotlib

matplotlib.use("Agg")

from tfperf.lesson import plots  # noqa: E402


def test_log_axes_are_labelled_with_plain_numbers():
    fig, (ax,) = plots.new_figure(1)
    records = [{"size": 0.01 * 4**i, "ms": 0.1 * 8**i, "kind": k} for i in range(6) for k in ("a", "b")]
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
    from tfperf.lesson import widgets

    assert widgets.Run is plots.Run
    run = plots.Run("run 1", {"n": 3}, [{"x": 1}])
    assert (run.label, run.settings, run.records) == ("run 1", {"n": 3}, [{"x": 1}])


def test_chapter_5_bars_stay_readable_after_five_runs():
    import matplotlib.pyplot as plt

    from tfperf.experiments import gpu_sync

    runs = [
        plots.Run(
            f"run {k + 1}",
            records=[
                {
                    "strategy": s,
                    "ms_per_step": 0.5 + i + k,
                    "host_syncs": 3,
                    "busy": 50.0,
                    "source": "cpu",
                    "timeline": [{"t": 0.0, "busy": 10.0}, {"t": 0.1, "busy": 20.0}],
                }
                for i, s in enumerate(gpu_sync.STRATEGIES)
            ],
        )
        for k in range(5)
    ]
    fig = plt.figure(figsize=plots.FIGSIZE, layout="constrained")
    gpu_sync.plot_sync_costs(fig, runs)
    ax = fig.axes[0]
    # strategies are labelled once each, horizontally; every run is a bar of its own, told apart by the legend
    assert [t.get_text() for t in ax.get_yticklabels()] == list(gpu_sync.STRATEGIES)
    assert all(t.get_rotation() == 0 for t in ax.get_yticklabels())
    assert len(ax.patches) == 20 and [t.get_text() for t in ax.get_legend().get_texts()] == [r.label for r in runs]
    # every value label sits inside the axes, and bars are at least about 0.15 inch high
    fig.canvas.draw()
    box = ax.get_window_extent()
    for note in ax.texts:
        extent = note.get_window_extent()
        assert box.x0 <= extent.x0 and extent.x1 <= box.x1, note.get_text()
    bar_inches = ax.patches[0].get_window_extent().height / fig.dpi
    assert bar_inches >= 0.12
    plt.close(fig)


def test_a_group_keeps_its_colour_across_runs_and_panels_and_the_legend_stays_short():
    import matplotlib.pyplot as plt

    fig = plt.figure()
    left, right = fig.subplots(1, 2)
    runs = [
        plots.Run(
            f"run {i + 1}", records=[{"x": x, "y": x * (i + 1), "kind": k} for x in (1, 2) for k in ("a", "b", "c")]
        )
        for i in range(5)
    ]
    for run, prefix, style in plots.each_run(runs):
        plots.plot_lines(left, run.records, x="x", y="y", group="kind", label_prefix=prefix, linestyle=style)
        plots.plot_lines(right, run.records, x="x", y="y", group="kind", label_prefix=prefix, linestyle=style)
    colour = {line.get_label(): line.get_color() for ax in (left, right) for line in ax.get_lines()}
    assert all(colour[f"run {i}: a"] == colour["run 1: a"] for i in range(2, 6))
    assert len({colour["run 1: a"], colour["run 1: b"], colour["run 1: c"]}) == 3
    assert len({str(style) for _, _, style in plots.each_run(runs)}) == 5  # five runs told apart
    plots.legend(left, runs, fontsize=8)
    entries = [t.get_text() for t in left.get_legend().get_texts()]
    assert entries == ["a", "b", "c", "run 1", "run 2", "run 3", "run 4", "run 5"]  # not 15 lines
    plots.legend(right, runs[:1])
    assert [t.get_text() for t in right.get_legend().get_texts()][:3] == ["run 1: a", "run 1: b", "run 1: c"]
    plt.close(fig)


def test_a_log_axis_spanning_little_is_labelled_along_its_length():
    fig, (ax,) = plots.new_figure(1)
    records = [{"size": s, "ms": ms, "kind": "a"} for s, ms in ((0.01, 0.08), (0.05, 0.12), (0.2, 0.19))]
    plots.plot_lines(ax, records, x="size", y="ms", group="kind", logx=True, logy=True)
    fig.canvas.draw()
    low, high = ax.get_ylim()
    shown = [
        float(t.get_text())
        for t in ax.get_yticklabels(minor=True) + ax.get_yticklabels()
        if t.get_text() and low <= float(t.get_text()) <= high
    ]
    assert min(shown) < 0.1 < 0.15 <= max(shown)  # labels below and well above 0.1, not only at the bottom


def labelled_ticks(axis) -> list:
    """The tick labels a reader sees on ``axis``: non-empty, inside the axis's limits."""
    low, high = sorted(axis.get_view_interval())
    ticks = axis.get_major_ticks() + axis.get_minor_ticks()
    return [t.label1 for t in ticks if t.label1.get_visible() and t.label1.get_text() and low <= t.get_loc() <= high]


def overlapping_labels(fig) -> list[tuple[str, str]]:
    """Pairs of tick labels of one axis of ``fig`` that, drawn, stand less than a character's width
    apart (they read as one: "10 15")."""
    renderer = fig.canvas.get_renderer()
    pairs = []
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            labels = labelled_ticks(axis)
            pad = [renderer.points_to_pixels(label.get_fontsize()) / 2 for label in labels]
            boxes = [label.get_window_extent(renderer).padded(p) for label, p in zip(labels, pad)]
            for i in range(len(boxes)):
                for j in range(i + 1, len(boxes)):
                    if boxes[i].overlaps(boxes[j]):
                        pairs.append((labels[i].get_text(), labels[j].get_text()))
    return pairs


def test_a_log_axis_of_counts_labels_whole_numbers_only():
    fig, (ax,) = plots.new_figure(1)
    records = [{"n": n, "v": 100.0 * n**0.5, "kind": "a"} for n in (1, 2)]
    plots.plot_lines(ax, records, x="n", y="v", group="kind", logx=True, logy=True, integer_x=True)
    fig.canvas.draw()
    shown = [label.get_text() for label in labelled_ticks(ax.xaxis)]
    assert shown and all(float(text) == int(float(text)) for text in shown), shown
