"""A real chapter's reference solution graded through ``python -m tfperf grade`` (TensorFlow: slow).

Its throughput checks (``grading.assert_speedup``) run in the sandboxed kernel and record
their ratios through ``TFPERF_RECORD`` into the ledger and the summary.
"""

import pytest

from tests.classgrading import chapter
from tfperf.classgrading.ledger import GRADED, Ledger

pytestmark = pytest.mark.slow

ASSIGNMENT = "01_tensors"


def test_the_reference_of_a_chapter_scores_full_marks_with_its_speedups_recorded(tmp_path):
    course = chapter.make_course(tmp_path / "course", ASSIGNMENT, ["reference"])
    result = chapter.grade(course, ASSIGNMENT, "--reference", "reference")
    assert result.returncode == 0, result.stdout + result.stderr
    entry = Ledger(course / "reports", ASSIGNMENT).read("reference")
    assert entry.status == GRADED and entry.score == entry.max_score > 0, entry
    exercises = {row["exercise"] for row in entry.speedups}
    assert "01_tensors.keep_data_on_device" in exercises, entry.speedups
    # 7 pairs planned: at least the 4 that settle a median of 7 (timing.settled_at), each one a ratio measured
    assert all(len(row["ratios"]) >= 4 and min(row["ratios"]) > 0 for row in entry.speedups)
    summary = (course / "reports" / ASSIGNMENT / "summary.md").read_text()
    assert "reference (reference): the submission of `reference`, named with --reference" in summary
    assert (course / "feedback" / "reference" / ASSIGNMENT / "tensors_and_devices.html").exists()
