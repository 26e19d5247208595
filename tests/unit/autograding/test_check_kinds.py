"""The check kinds the grading process decides: one table, one module per kind, and a kind added by one line."""

import inspect
import types

import pytest

from tfperf.autograding import check_kinds, outside


def test_every_kind_reads_its_checks_and_decides_them_with_the_same_signatures():
    for kind in check_kinds.KINDS:
        assert isinstance(kind.AFTER_THE_JUDGE, bool), kind.__name__
        assert list(inspect.signature(kind.specs).parameters) == ["grading", "grade_id", "source"], kind.__name__
        assert list(inspect.signature(kind.decide).parameters) == ["grading", "check", "outcome"], kind.__name__


def test_every_reading_a_worker_serves_is_a_check_kinds_and_the_judge_may_ask_for_it():
    from tfperf.autograding import judge

    for name, reader in check_kinds.PROBES.items():
        assert list(inspect.signature(reader).parameters) == ["request", "namespace"], name
        assert name in judge.PROBES


def test_a_cell_the_judge_ran_or_without_an_unfixed_worker_has_nothing_left_to_decide_here():
    source = "grading.assert_prints_at_most(f, (1,), 0, what='f')\ngrading.assert_moves_fewer_bytes(f, g, (1,), at_most=0.5)\n"
    exercise = outside.Exercise(
        answer="a", tests=("t1", "t2"), cells=("", ""), answer_position=1, test_sources=(source, source)
    )
    grading = check_kinds.Grading(exercise, None, [], ("t2",), None, None)
    assert [(kind.__name__.rsplit(".")[-1], g) for kind, g, _ in grading.pending(["t1", "t2"])] == [("printing", "t1")]
    with_worker = check_kinds.Grading(exercise, None, [], (), lambda check: None, None)
    assert [(kind.__name__.rsplit(".")[-1], g) for kind, g, _ in with_worker.pending(["t1", "t2"])] == [
        ("printing", "t1"),
        ("printing", "t2"),
        ("traffic", "t1"),
        ("traffic", "t2"),
    ]


@pytest.mark.slow
def test_a_kind_added_to_the_table_is_decided_for_every_passed_cell(monkeypatch):
    """One module (here a namespace with ``specs`` and ``decide``) and one line in ``KINDS``: the grading process
    asks the answer's worker for data and decides; a cell that failed in the worker is not decided again."""
    decided = []

    def specs(grading, grade_id, source):
        return [source.count("assert")]

    def decide(grading, check, outcome):
        reply = grading.answer.request(do="sync", token="abc")  # data from the worker, never its verdict
        decided.append((check, reply.get("sync")))
        if check > 1:
            outcome.error = {"ename": "GradingFailure", "evalue": f"{check} asserts: too many"}

    toy = types.SimpleNamespace(__name__="toy_checks", AFTER_THE_JUDGE=True, specs=specs, decide=decide)
    monkeypatch.setattr(check_kinds, "KINDS", (*check_kinds.KINDS, toy))
    exercise = outside.Exercise(
        answer="answer",
        tests=("t1", "t2", "t3"),
        cells=("", "PLACEHOLDER"),
        answer_position=1,
        test_sources=("assert square(2) == 4", "assert square(3) == 9\nassert square(1) == 1", "assert square(2) == 5"),
    )
    outcomes = outside.grade_exercise(exercise, "def square(x):\n    return x * x", timeout=20, sandboxed=False)
    assert decided == [(1, "abc"), (2, "abc")]  # t3 failed in the worker: nothing decided for it
    assert outcomes["t1"].passed
    assert outcomes["t2"].error["evalue"] == "2 asserts: too many"
    assert outcomes["t3"].error["ename"] == "AssertionError"
