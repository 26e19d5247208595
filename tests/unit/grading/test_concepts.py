"""The in-kernel concept checks: the form visibly, the right letter in hidden tests."""

import pytest

from tfperf import grading
from tfperf.grading import concepts


def test_the_visible_check_tells_the_form_not_the_answer(capsys):
    concepts.check_form(" C", question="1")
    assert (
        capsys.readouterr().out == 'Question 1: your answer "c" is recorded; the grading checks whether it is right.\n'
    )
    for wrong in ("e", "ab", 3, None):
        with pytest.raises(grading.GradingFailure, match="one letter in quotes"):
            concepts.check_form(wrong, question="1")
    with pytest.raises(grading.NotWritten, match='question 1 is not written yet.\nReread the section "Concept checks"'):
        concepts.check_form(grading.not_written("tape_records"), question="1")


def test_the_hidden_check_names_the_section_to_reread(capsys):
    concepts.check_answer("b", "b", question="2")
    assert capsys.readouterr().out == "Question 2: right.\n"
    with pytest.raises(grading.GradingFailure, match='not the right answer.\nReread the section "3. Retracing"'):
        concepts.check_answer("a", "b", question="2", section="3. Retracing")

    class Any(str):
        def __eq__(self, other):
            return True

        __hash__ = str.__hash__

    with pytest.raises(grading.GradingFailure, match="one letter in quotes"):
        concepts.check_answer(Any("a"), "b", question="2")
