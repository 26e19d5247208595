"""The grading summary (tfperf.classgrading.report), from ledger entries."""

from tests.classgrading import toy
from tfperf.classgrading import report
from tfperf.classgrading.ledger import FAILED, GRADED, REJECTED, Entry


def entry(student, cells, *, speed=None, failures=(), anomalies=(), status=GRADED, problems=()):
    score = sum(s for s, _ in cells.values())
    return Entry(
        student,
        "toy",
        "c",
        status,
        score=score,
        max_score=sum(m for _, m in cells.values()),
        cells={k: list(v) for k, v in cells.items()},
        failures=[list(f) for f in failures],
        anomalies=[list(a) for a in anomalies],
        problems=list(problems),
        speedups=[{"exercise": "ex1", "ratios": speed, "target": 2.0}] if speed else [],
    )


ENTRIES = [
    entry("reference", {"t1": (2, 2), "t2": (3, 3)}, speed=[4.0, 4.2, 3.9]),
    entry("ann", {"t1": (2, 2), "t2": (3, 3)}, speed=[3.5, 3.6, 3.4]),
    entry(
        "bob",
        {"t1": (0, 2), "t2": (3, 3)},
        speed=[20.0, 21.0, 19.0],
        failures=[("t1", "AssertionError: square(3) returned 6, expected 9")],
    ),
    entry(
        "cat",
        {"t1": (0, 2), "t2": (0, 3)},
        speed=[1.1, 1.2, 1.0],
        failures=[
            ("t1", "AssertionError: square(3) returned 7, expected 9"),
            ("t2", "GradingFailure: speedup 1.1x, expected 2x"),
        ],
        anomalies=[("kernel lost", "toy: the kernel stopped"), ("locked cell changed", "toy: t2's checksum changed")],
    ),
    entry("dan", {}, status=REJECTED, problems=["missing notebook(s) toy.ipynb (no notebook found)"]),
    entry("eve", {}, status=FAILED, problems=["nbgrader autograde failed (exit 1): boom"]),
]


def test_anomalies_name_the_student_and_the_reason():
    found = report.anomalies(ENTRIES, reference="reference")
    kinds = {(s, k) for s, k, _ in found}
    assert ("bob", "speedup far beyond the reference (reference)") in kinds  # 20x against the reference's 4x
    assert not any(s == "ann" for s, _, _ in found)
    assert {
        ("cat", "kernel lost"),
        ("cat", "locked cell changed"),
        ("dan", "rejected"),
        ("eve", "grading failed"),
    } <= kinds


def test_the_named_reference_or_else_the_class_median():
    compared = report.comparison(ENTRIES, "reference")
    assert compared.label == "reference (reference)" and compared.speedups["ex1"] == 4.0
    compared = report.comparison(ENTRIES[1:], "reference")  # named, but not in the ledger
    assert compared.label == "class median" and compared.speedups["ex1"] == 3.5  # median of 3.5, 20, 1.1
    assert "`reference`, named with --reference, has no graded speedups" in compared.source
    assert report.comparison(ENTRIES).label == "class median"


def test_summary_and_plots(tmp_path):
    path = report.write(tmp_path, "toy", ENTRIES, ["This run: test"], reference="reference")
    text = path.read_text()
    assert path == tmp_path / "toy" / "summary.md"
    assert "| t1 | 2 | 2 | 2 | 0: 2, 2: 2 |" in text  # reference and ann full, bob and cat 0
    assert "| exercise | students | min | median | max | reference (reference) |" in text
    assert "| ex1 | 3 | 1.10x | 3.50x | 20.00x | 4.00x |" in text
    # both square(3) failures count as one, shown as a student saw it (its numbers kept)
    assert (
        "2 student(s): AssertionError: square(3) returned 6, expected 9 "
        "(2 wordings that differ in their numbers; this is the most frequent)"
    ) in text
    assert "#" not in text.split("## Most common failure messages")[1].split("## Anomalies")[0]
    assert "missing notebook(s) toy.ipynb" in text and "nbgrader autograde failed" in text
    for png in ("points.png", "speedups.png"):
        assert (tmp_path / "toy" / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f"![{png}]({png})" in text


def test_without_a_named_reference_the_summary_compares_with_the_class_median_and_says_so(tmp_path):
    """A student who happens to be called ``reference`` is a student like the others unless named."""
    text = report.write(tmp_path, "toy", ENTRIES, ["This run: test"]).read_text()
    assert "| exercise | students | min | median | max | class median |" in text
    assert "| ex1 | 4 | 1.10x | 3.75x | 20.00x | 3.75x |" in text  # reference, ann, bob, cat
    assert "class median: the class median (no reference submission was named: --reference STUDENT)" in text
    assert "| bob | speedup far beyond the class median | ex1: 20.00x, class median 3.75x" in text
    assert "| reference |" not in text.split("## Measured speedups")[1]


def test_grade_with_reference_compares_with_that_submission(toy_course):
    """``python -m tfperf grade --reference ID`` (the real nbgrader CLI): the summary's comparison is ID's."""
    released = toy.released(toy_course)
    toy.submit(toy_course, "solution-run", toy.variant("reference", released))
    toy.submit(toy_course, "ann", toy.variant("wrong", released))  # check_total runs: a speedup is recorded
    result = toy.grade(toy_course, "--reference", "solution-run")
    assert result.returncode == 0, result.stdout + result.stderr
    text = (toy_course / "reports" / toy.ASSIGNMENT / "summary.md").read_text()
    assert "| exercise | students | min | median | max | reference (solution-run) |" in text
    assert "reference (solution-run): the submission of `solution-run`, named with --reference" in text
    assert "| toy_total | 1 |" in text  # ann only: the reference is the comparison, not a student


def test_points_plot_is_a_page_wide_grid_with_whole_students(tmp_path):
    """Twelve test cells: three rows of four, about 1000 px wide (not one 3456 px strip), integer ticks."""
    from PIL import Image

    cells = {f"check_{i:02d}": (i % 3, 2) for i in range(12)}
    entries = [entry(f"s{n}", cells) for n in range(3)]
    assert report.plot_points(entries, tmp_path / "points.png")
    width, height = Image.open(tmp_path / "points.png").size
    assert width <= 1000 and height >= 3 * 200, (width, height)
    axes = [ax for ax in report.points_figure(entries).axes if ax.get_visible()]
    assert len(axes) == 12
    for ax in axes:
        assert all(float(t).is_integer() for t in ax.get_yticks()), ax.get_yticks()
        assert [t.get_text() for t in ax.get_xticklabels()][0] == "0"  # the scale starts at 0 points


def test_a_listed_failure_keeps_its_items_in_the_summary():
    from tfperf.classgrading.batch import _failure_message

    evalue = "record_run(...) recorded a run, but:\n  - its status is 'running'\n  - it leaves loss empty\nReread x."
    message = _failure_message([{"output_type": "error", "ename": "GradingFailure", "evalue": evalue}])
    assert message == (
        "GradingFailure: record_run(...) recorded a run, but: - its status is 'running' - it leaves loss empty"
    )
