"""The grading summary (tfperf.classgrading.report), from ledger entries."""

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
    found = report.anomalies(ENTRIES)
    kinds = {(s, k) for s, k, _ in found}
    assert ("bob", "speedup far beyond the reference") in kinds  # 20x against the reference's 4x
    assert not any(s == "ann" for s, _, _ in found)
    assert {
        ("cat", "kernel lost"),
        ("cat", "locked cell changed"),
        ("dan", "rejected"),
        ("eve", "grading failed"),
    } <= kinds


def test_reference_falls_back_to_the_class_median():
    ref, source = report.reference_speedups(ENTRIES[1:])
    assert "class median" in source and ref["ex1"] == 3.5  # median of 3.5, 20, 1.1
    ref, source = report.reference_speedups(ENTRIES)
    assert "reference" in source and ref["ex1"] == 4.0


def test_summary_and_plots(tmp_path):
    path = report.write(tmp_path, "toy", ENTRIES, ["This run: test"])
    text = path.read_text()
    assert path == tmp_path / "toy" / "summary.md"
    assert "| t1 | 2 | 2 | 2 | 0: 2, 2: 2 |" in text  # reference and ann full, bob and cat 0
    assert "| ex1 | 3 | 1.10x | 3.50x | 20.00x | 4.00x |" in text
    # numbers masked: both square(3) failures count as one message
    assert "2 student(s): AssertionError: square(#) returned #, expected #" in text
    assert "missing notebook(s) toy.ipynb" in text and "nbgrader autograde failed" in text
    for png in ("points.png", "speedups.png"):
        assert (tmp_path / "toy" / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f"![{png}]({png})" in text
