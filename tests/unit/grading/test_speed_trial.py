"""The one speed trial, run on two sides in this process (as the kernel's visible check runs it)."""

import contextlib
import time

import numpy as np
import pytest

from tfperf.grading import GradingFailure, speed_trial
from tfperf.grading.speed import recording

CLOSE = speed_trial.Closeness(rtol=1e-6, atol=0.0)


def sides(baseline, candidate, make_inputs):
    """The unfixed code's side and the answer's, on inputs drawn for both."""
    draws = speed_trial.Draws(make_inputs)
    answer = speed_trial.LocalSide(candidate, draws, who="Your function", record=recording)
    unfixed = speed_trial.LocalSide(baseline, draws, who="The unfixed code", record=recording)
    return unfixed, answer


def sleeps(seconds):
    def function(x):
        time.sleep(seconds)
        return x * 2

    return function


def inputs():
    return (np.random.default_rng().standard_normal(4),)


def test_each_side_gets_its_own_copy_of_arrays_that_a_call_could_change():
    class Model:  # an object that cannot be copied, like a Keras model: shared
        def __deepcopy__(self, memo):
            raise TypeError("no copies")

    model = Model()
    draws = speed_trial.Draws(lambda: (model, np.ones(4)))
    first, again = draws.sample([1])[0], draws.sample([1])[0]
    first[1][:] = 0.0  # a call that changes its input in place
    assert again[0] is model and again[1].sum() == 4.0


def test_only_the_last_two_samples_inputs_are_kept():
    made = []
    draws = speed_trial.Draws(lambda: made.append(1) or (np.ones(1),))
    draws.sample([1, 2])
    draws.sample([3, 1])  # the other side of the pair: seed 1 again, not made again
    assert len(made) == 3
    draws.sample([4])
    draws.sample([5])
    draws.sample([1])  # no longer among the last two samples: made again
    assert len(made) == 6


def test_a_fast_answer_passes_and_the_pairs_stop_once_settled():
    """20x against a 2x target: every pair above it, even with a sleep overslept under load (at 10x, one pair measured
    1.86x while class grading ran beside), so 4 of 7 settle it."""
    unfixed, answer = sides(sleeps(0.020), sleeps(0.001), inputs)
    verdict = speed_trial.trial(unfixed, answer, exercise="demo", target=2.0, close=CLOSE, pairs=7)
    assert verdict.passed and len(verdict.ratios) == 4, verdict.measured
    assert "settled after 4 of 7 pairs" in verdict.measured and "ms per call" in verdict.measured


def test_every_pair_is_taken_where_asked_and_the_kernel_is_checked_between_pairs():
    unfixed, answer = sides(sleeps(0.010), sleeps(0.001), inputs)
    checked = []
    verdict = speed_trial.trial(
        unfixed,
        answer,
        exercise="demo",
        target=2.0,
        close=CLOSE,
        pairs=5,
        every_pair=True,
        between_pairs=lambda: checked.append(1),
    )
    assert verdict.passed and len(verdict.ratios) == 5 == len(checked)


def test_an_answer_wrong_on_some_calls_only_is_caught_among_the_timed_calls():
    calls = []

    def wrong_now_and_then(x):
        calls.append(1)
        return x * 2 if len(calls) <= 2 or len(calls) % 3 == 0 else x * 3  # the two untimed calls right

    # one drawn call compared per planned pair: all 11 right by chance with odds of (1/3)**11, about 6 in a million
    unfixed, answer = sides(sleeps(0.002), wrong_now_and_then, inputs)
    verdict = speed_trial.trial(unfixed, answer, exercise="demo", target=2.0, close=CLOSE, pairs=11)
    assert not verdict.passed and "differs from the unfixed code's" in verdict.problem
    assert verdict.wrong  # a wrong answer: what the grading process holds against its other cells too


def test_a_slow_answer_is_refused_as_slow_not_as_wrong():
    unfixed, answer = sides(sleeps(0.002), sleeps(0.002), inputs)
    verdict = speed_trial.trial(unfixed, answer, exercise="demo", target=4.0, close=CLOSE, pairs=5)
    assert not verdict.passed and not verdict.wrong, verdict.measured


def test_the_work_a_check_tallies_must_be_done_on_every_compared_call_timed_or_not():
    """A check's ``work`` (a tally the course keeps: chapter 5's runs of ``train_step`` and what they were given, each
    run weighted from a seed the trial draws for the call's inputs) must grow by what the unfixed code's call on the
    same inputs adds. An answer that does that work on the first calls only (where it could tell it is checked) returns
    the same results and is caught on a timed call, as is one whose runs add up to the same plain sum in other
    runs; one that does the work on every call passes."""
    runs: list[float] = []  # what each run was given, in order

    class Tally:
        def __init__(self, seed):
            self.weights, self.start, self.end = np.random.default_rng(seed).uniform(0.5, 1.5, 100), len(runs), None

        def added(self):
            given = runs[self.start : self.end]
            return {"steps": len(given), "given": float(np.dot(self.weights[: len(given)], given))}

    @contextlib.contextmanager
    def work(seed):
        tally = Tally(seed)
        yield tally
        tally.end = len(runs)

    def steps(x):
        runs.extend(float(v) for v in np.abs(x))

    def unfixed_code(x):
        time.sleep(0.004)
        steps(x)
        return x * 2

    def honest(x):
        steps(x)
        return x * 2

    def honest_on_the_first_calls(function):
        calls = []

        def answer(x):
            calls.append(1)
            if len(calls) <= 6:  # the untimed calls and those that size a sample
                steps(x)
            else:
                function(x)
            return x * 2

        return answer

    probe = honest_on_the_first_calls(lambda x: steps(np.ones(4)))  # as many runs, given other data
    fewer = honest_on_the_first_calls(lambda x: None)
    lump = honest_on_the_first_calls(lambda x: steps(np.array([np.abs(x).sum(), 0.0, 0.0, 0.0])))  # the plain sum
    cases = (
        (honest, None),
        (probe, "the given:"),
        (fewer, "the steps: 0, against 4"),
        (lump, "the given:"),
    )
    for answer, problem in cases:
        draws = speed_trial.Draws(inputs)
        verdict = speed_trial.trial(
            speed_trial.LocalSide(unfixed_code, draws, who="The unfixed code", record=recording, work=work),
            speed_trial.LocalSide(answer, draws, who="Your function", record=recording, work=work),
            exercise="demo",
            target=2.0,
            close=CLOSE,
            pairs=7,
            work=True,
        )
        if problem is None:
            assert verdict.passed, verdict.problem or verdict.measured
        else:
            assert not verdict.passed and problem in verdict.problem and "in a timed call" in verdict.problem
            assert "the timed calls must do the work the checked calls do" in verdict.problem
    # without ``work`` the trial compares results only: the answer that skips the work passes
    draws = speed_trial.Draws(inputs)
    verdict = speed_trial.trial(
        speed_trial.LocalSide(unfixed_code, draws, who="The unfixed code", record=recording, work=work),
        speed_trial.LocalSide(honest_on_the_first_calls(lambda x: None), draws, who="Your function", record=recording),
        exercise="demo",
        target=2.0,
        close=CLOSE,
        pairs=7,
    )
    assert verdict.passed, verdict.problem


def test_an_exception_while_timed_names_who_raised():
    calls = []

    def breaks_later(x):
        calls.append(1)
        if len(calls) > 3:
            raise RuntimeError("out of memory")
        return x * 2

    unfixed, answer = sides(sleeps(0.002), breaks_later, inputs)
    with pytest.raises(GradingFailure, match="Your function raised RuntimeError while being timed: out of memory"):
        speed_trial.trial(unfixed, answer, exercise="demo", target=2.0, close=CLOSE, pairs=7)


def test_limits_on_reads_and_uploads_hold_on_every_timed_call():
    """An answer honest only on the calls it can tell are counted apart (here: on two calls in three) breaks a limit
    on a timed call; the same answer passes where no limits are asked; an honest one passes with them."""
    tf = pytest.importorskip("tensorflow")
    import itertools

    def tensor_inputs():
        return (tf.constant(np.random.default_rng().standard_normal(64).astype(np.float32)),)

    def unfixed(x):
        time.sleep(0.010)
        return x * 2.0

    def honest(x):
        return x * 2.0

    turns = itertools.count()

    def reads_now_and_then(x):
        if next(turns) % 3 == 2:
            return tf.constant(x.numpy() * 2.0)  # a read back, and an upload
        return x * 2.0

    limits = speed_trial.CallLimits(host_syncs=0, uploads=0)
    found = {}
    for name, candidate, asked in [
        ("gated", reads_now_and_then, limits),
        ("gated, unlimited", reads_now_and_then, None),
        ("honest", honest, limits),
    ]:
        unfixed_side, answer = sides(unfixed, candidate, tensor_inputs)
        verdict = speed_trial.trial(
            unfixed_side, answer, exercise="demo", target=2.0, close=CLOSE, pairs=5, limits=asked
        )
        found[name] = verdict.problem
    assert "made 1 host read (1 by .numpy()); at most 0 host reads a call" in found["gated"], found
    assert found["gated, unlimited"] is None and found["honest"] is None, found


def test_limits_count_uploads_and_spare_the_shapes_of_a_calls_own_arguments():
    tf = pytest.importorskip("tensorflow")

    def inputs_with_table():
        rng = np.random.default_rng()
        return rng.standard_normal((50, 8)).astype(np.float32), tf.constant(rng.standard_normal(8).astype(np.float32))

    def unfixed(table, weights):
        return tf.stack([tf.reduce_sum(tf.convert_to_tensor(table)[i] * weights) for i in range(table.shape[0])])

    def once(table, weights):
        rows = int(tf.shape(weights)[0])  # the shape of an argument: not a read
        return tf.linalg.matvec(tf.convert_to_tensor(table), weights) + 0.0 * rows

    for candidate, uploads, broken in [(once, 1, False), (unfixed, 1, True), (unfixed, 50, False)]:
        unfixed_side, answer = sides(unfixed, candidate, inputs_with_table)
        verdict = speed_trial.trial(
            unfixed_side,
            answer,
            exercise="demo",
            target=0.0,
            close=speed_trial.Closeness(rtol=1e-5, atol=1e-4),
            pairs=3,
            limits=speed_trial.CallLimits(host_syncs=0, uploads=uploads),
        )
        assert (verdict.problem is not None) == broken, (candidate.__name__, uploads, verdict.problem)
        if broken:
            assert "made 50 uploads" in verdict.problem and "at most 1 uploads a call" in verdict.problem


def test_each_side_goes_first_in_turn_and_inputs_made_for_both_are_not_charged_to_one():
    """In one process the two sides share their inputs (:class:`Draws`): made before the pair, each side's timed
    making is a copy. The answer once went first in every pair and made every input both sides used, so a fast
    reference with inputs slow to make failed "worked while its inputs were made" (chapter 1's in the kernel)."""
    runs = []

    class Side(speed_trial.LocalSide):
        def ask(self, **request):
            if request["do"] == "run":
                runs.append(self.who)
            return super().ask(**request)

    def slow_to_make():
        time.sleep(0.06)
        return (np.random.default_rng().standard_normal(4),)

    draws = speed_trial.Draws(slow_to_make)
    answer = Side(sleeps(0.025), draws, who="answer", record=recording)
    unfixed = Side(sleeps(0.100), draws, who="unfixed", record=recording)
    verdict = speed_trial.trial(unfixed, answer, exercise="demo", target=2.0, close=CLOSE, pairs=5, every_pair=True)
    assert verdict.passed and verdict.problem is None and verdict.preparing < 0.5, (verdict.problem, verdict.preparing)
    timed = runs[-10:]  # the five timed pairs, after the untimed calls and the sample sizes' runs
    assert timed[::2] == ["answer", "unfixed", "answer", "unfixed", "answer"], runs
    assert all(first != second for first, second in zip(timed[::2], timed[1::2])), runs
