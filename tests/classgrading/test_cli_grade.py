"""``python -m tfperf grade``'s argument handling (no grading)."""

import pytest

from tfperf import cli


def test_an_assignment_the_gradebook_lacks_is_refused_with_what_to_do(toy_course, capsys):
    assert cli.main(["grade", "nope", "--course", str(toy_course), "--no-progress"]) == 2
    assert "run `nbgrader generate_assignment nope` first" in capsys.readouterr().err


def test_submit_goes_with_slurm(toy_course):
    with pytest.raises(SystemExit) as raised:
        cli.main(["grade", "toy", "--course", str(toy_course), "--submit"])
    assert raised.value.code == 2
