"""Chapter 5's grading assertions: host syncs, printed lines, and the tf.function hint."""

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

from tfperf import grading  # noqa: E402
from tfperf.grading import results, speed  # noqa: E402
from tfperf.runtime import logs  # noqa: E402


def _loop(read_every):
    def run(steps):
        x = tf.constant(0.0)
        for step in range(steps):
            x = x + 1.0
            if read_every and (step + 1) % read_every == 0:
                float(x)
        return x

    return run


def test_host_syncs_at_most_passes_and_returns_the_result():
    result = grading.assert_host_syncs_at_most(_loop(10), (100,), 10, what="the loop")
    assert float(result) == 100.0


def test_host_syncs_at_most_fails_with_the_count_and_the_section():
    with pytest.raises(grading.GradingFailure) as err:
        grading.assert_host_syncs_at_most(_loop(1), (30,), 3, what="the loop", section="2. Sync points")
    message = str(err.value)
    assert "30 host reads (30 by float())" in message
    assert "at most 3" in message and '"2. Sync points"' in message


def test_numpy_inside_a_tf_function_is_explained():
    @tf.function
    def step(x):
        return x.numpy()

    with pytest.raises(grading.GradingFailure) as err:
        grading.assert_host_syncs_at_most(step, (tf.constant(1.0),), 1, what="train", section="2. Sync points")
    assert "symbolic" in str(err.value) and "outside" in str(err.value)


def test_not_implemented_still_means_not_written():
    def todo():
        raise NotImplementedError()

    with pytest.raises(grading.GradingFailure, match="not written yet"):
        grading.assert_host_syncs_at_most(todo, (), 0, what="train")


def test_prints_at_most_counts_print_and_tf_print(capfd):
    def noisy(n):
        for i in range(n):
            print("step", i)
            tf.print("loss", i)
        return n

    assert grading.assert_prints_at_most(lambda: None, (), 0, what="quiet") is None
    with pytest.raises(grading.GradingFailure, match="printed 6 lines") as err:
        grading.assert_prints_at_most(noisy, (3,), 1, what="the loop", section="5. Printing")
    assert "'step 0'" in str(err.value)
    assert capfd.readouterr().err == ""  # nothing leaked to the cell's stderr


def test_captured_output_captures_both_streams():
    with logs.captured_output() as captured:
        print("to stdout")
        tf.print("to stderr")
    assert (captured.stdout.strip(), captured.native.strip()) == ("to stdout", "to stderr")


def test_check_reports():
    expected = [(9, 1.5), (19, 0.25)]
    grading.check_reports([(9, 1.5), (19, 0.2500001)], expected)
    with pytest.raises(grading.GradingFailure, match=r"steps \[0, 1, 2\]"):
        grading.check_reports([(0, 1.0), (1, 1.0), (2, 1.0)], expected)
    with pytest.raises(grading.GradingFailure, match="is a EagerTensor"):
        grading.check_reports([(9, tf.constant(1.5)), (19, 0.25)], expected)
    with pytest.raises(grading.GradingFailure, match="step 19 reported 0.3"):
        grading.check_reports([(9, 1.5), (19, 0.3)], expected, section="3. The incident")


def test_calls_of_a_function_passed_are_compared_in_number_order_and_arguments():
    calls = []
    (report,) = speed.recording((lambda step, loss: None,), calls)
    report(9, np.float32(1.5))
    report(19, tf.constant(0.25))
    assert calls == [[9.0, 1.5], [19.0, 0.25]]
    assert results.calls_differ(calls, [[9, 1.5], [19, 0.2500001]], rtol=1e-4, atol=1e-5) is None
    assert results.calls_differ([], calls, rtol=1e-4, atol=1e-5) == (
        "it called the function it was passed 0 times; 2 calls were due"
    )
    assert results.calls_differ(calls, [[9, 1.5], [18, 0.25]], rtol=1e-4, atol=1e-5) == (
        "its call 2 of the function it was passed had arguments (19, 0.25); (18, 0.25) were due"
    )
    assert results.call_numbers([object()]) != results.call_numbers([object()])  # NaN: equal to nothing due


@pytest.mark.parametrize(
    "value", [[0.25], (0.25,), np.array([0.25]), np.array("0.25"), "0.25", tf.constant("0.25"), tf.constant([0.25])]
)
def test_a_call_back_is_compared_as_check_reports_takes_a_report_a_number_each(value):
    due = [[19.0, 0.25]]
    assert results.calls_differ([results.call_numbers((19, value))], due, rtol=1e-4, atol=1e-5) is not None
    for number in (0.25, np.float32(0.25), np.array(0.25), tf.constant(0.25)):
        assert results.calls_differ([results.call_numbers((np.int64(19), number))], due, rtol=1e-4, atol=1e-5) is None


def test_a_function_passed_may_be_called_with_its_arguments_by_name():
    calls, seen = [], []
    (report,) = speed.recording((lambda step, loss: seen.append((step, loss)),), calls)
    report(3, loss=0.5)
    report(loss=0.25, step=4)
    assert calls == [[3.0, 0.5], [4.0, 0.25]] and seen == [(3, 0.5), (4, 0.25)]
    with pytest.raises(TypeError):  # names the function does not take: its own error
        report(5, value=1.0)


def test_the_calls_due_are_the_unfixed_codes_or_what_the_check_says():
    from tfperf.experiments import gpu_sync

    unfixed = [[step, 0.5] for step in range(7)]
    inputs = (None, np.zeros((7, 2)), None, lambda step, loss: None, 3)
    assert speed.calls_due(None, unfixed, inputs) == unfixed
    assert speed.calls_due(gpu_sync.reports_due, unfixed, inputs) == [[2, 0.5], [5, 0.5], [6, 0.5]]


def _epochs(kind):
    @tf.function
    def step(x, lr):
        return x * lr

    def run(epochs, on_epoch_end):
        history = []
        for epoch in range(epochs):
            for i in range(5):
                n = epoch * 5 + i
                if kind == "retrace":
                    step(tf.constant(1.0), 0.1 + n)  # a new Python float: a trace per step
                elif kind == "grows":
                    history.append(tf.constant(float(n)))
                    for h in history:  # work that grows with the steps done
                        h + 1.0
                else:
                    step(tf.constant(1.0), tf.constant(0.1 + n))
            on_epoch_end(epoch)
        return epochs

    return run


def test_steady_epochs_passes_a_steady_loop():
    assert grading.assert_steady_epochs(_epochs("steady"), (6,), what="the loop") == 6


def test_steady_epochs_fails_on_retracing_and_on_growth():
    with pytest.raises(grading.GradingFailure, match="kept tracing after the first epoch: traces per epoch 5, 5, 5"):
        grading.assert_steady_epochs(_epochs("retrace"), (6,), what="the loop", section="7. Progressive slowdown")
    with pytest.raises(grading.GradingFailure, match=r"does different work in different epochs: epoch 2 ran AddV2 x40"):
        grading.assert_steady_epochs(_epochs("grows"), (6,), what="the loop")


def test_steady_epochs_times_growth_that_the_counters_cannot_see():
    import time

    def slower_python(epochs, on_epoch_end):
        for epoch in range(epochs):
            tf.constant(1.0) + 1.0
            time.sleep(0.01 * epoch)  # host work that grows, no TensorFlow op
            on_epoch_end(epoch)

    with pytest.raises(grading.GradingFailure, match="slows down from epoch to epoch"):
        grading.assert_steady_epochs(slower_python, (9,), what="the loop", growth=1.5, slack=0.0)


def test_steady_epochs_needs_work_in_every_epoch():
    def lazy(epochs, on_epoch_end):
        for epoch in range(epochs):
            if epoch < 2:
                tf.constant(1.0) + 1.0
            on_epoch_end(epoch)

    with pytest.raises(grading.GradingFailure, match="ran no TensorFlow operations in epoch"):
        grading.assert_steady_epochs(lazy, (5,), what="the loop")


def test_steady_epochs_needs_the_callback():
    with pytest.raises(grading.GradingFailure, match="called on_epoch_end 0 times"):
        grading.assert_steady_epochs(lambda epochs, on_epoch_end: None, (5,), what="the loop")


def test_uploads_at_most():
    import numpy as np

    a = np.ones((4, 2), np.float32)

    def per_step(steps):
        return [tf.convert_to_tensor(a) for _ in range(steps)]

    assert len(grading.assert_uploads_at_most(per_step, (2,), 2, what="the loop")) == 2
    with pytest.raises(grading.GradingFailure, match="copied 5 NumPy arrays into tensors; at most 2"):
        grading.assert_uploads_at_most(per_step, (5,), 2, what="the loop", section="6. Copies")


# ---------------------------------------------------------------- reports made while the loop trains


def _training(when: str):
    """A loop of chapter 5's steps reporting the loss of every ``every``-th step: ``"on time"``, ``"a block late"``
    (the next block queued first), ``"at the end"`` (reports held back), or ``"own steps"`` (no gpu_sync.train_step)."""
    from tfperf.experiments import gpu_sync

    def train(w0, xs, ys, report, every):
        w, steps = tf.Variable(w0), int(xs.shape[0])
        due, held = gpu_sync.report_steps(steps, every), []
        for block, start in enumerate(range(0, steps, every)):
            if when == "own steps":
                loss = tf.reduce_mean(tf.square(tf.matmul(xs[start], w) - ys[start]))
            else:
                loss = gpu_sync.train_steps(w, xs[start : start + every], ys[start : start + every])
            held.append((due[block], loss))
            if when == "on time" or when == "own steps" or (when == "a block late" and len(held) == 2):
                step, value = held.pop(0)
                report(step, float(value))
        for step, value in held:
            report(step, float(value))
        return w.read_value()

    return train


def _checked(train, steps: int, every: int, reads: int, report=lambda step, loss: None):
    """``train`` checked on chapter 5's problem of ``steps`` steps: at most ``reads`` reads, each report made while it
    trains."""
    from tfperf.experiments import gpu_sync

    w0, xs, ys = gpu_sync.make_problem(steps, seed=1)
    args = (w0, xs, ys, report, every)
    return grading.assert_host_syncs_at_most(train, args, reads, what="train", reports_every=every, steps=steps)


@pytest.mark.parametrize("when", ["on time", "a block late"])
def test_reports_made_while_training_pass(when):
    seen = []
    _checked(_training(when), 30, 10, 3, lambda step, loss: seen.append(step))
    assert seen == [9, 19, 29]


def test_reports_held_back_to_the_end_fail_with_when_they_were_made():
    with pytest.raises(grading.GradingFailure) as err:
        _checked(_training("at the end"), 30, 5, 6)
    assert "the report for step 4 was made after 30 training steps had run; it is due before step 10" in str(err.value)
    from tfperf.experiments import gpu_sync  # without reports_every, as before: reads counted, reports not timed

    w0, xs, ys = gpu_sync.make_problem(30, seed=1)
    grading.assert_host_syncs_at_most(_training("at the end"), (w0, xs, ys, lambda s, v: None, 5), 6, what="train")


def test_a_report_made_by_name_is_timed_by_its_step_parameter():
    from tfperf.experiments import gpu_sync

    def train(w0, xs, ys, report, every):
        w = tf.Variable(w0)
        losses = [gpu_sync.train_steps(w, xs[s : s + every], ys[s : s + every]) for s in range(0, 20, every)]
        for k, loss in enumerate(losses):
            report(loss=float(loss), step=k * every + every - 1)
        return w.read_value()

    with pytest.raises(grading.GradingFailure, match="the report for step 4 was made after 20 training steps"):
        _checked(train, 20, 5, 4)


def _timed(train, steps: int = 40, every: int = 10):
    """``train`` timed against a loop reading every step by the course's speed trial, as chapter 5's speed check runs
    it (its tally of work around each compared call, the reports due picked from the unfixed code's): the verdict."""
    from tfperf.experiments import gpu_sync
    from tfperf.grading import speed_trial

    def unfixed(w0, xs, ys, report, every):
        w = tf.Variable(w0)
        for step in range(int(xs.shape[0])):
            report(step, float(gpu_sync.train_step(w, xs[step], ys[step])))
        return w.read_value()

    def inputs():
        w0, xs, ys = gpu_sync.make_problem(steps, seed=int(np.random.randint(2**31)))
        return w0, xs, ys, lambda step, loss: None, every

    draws, work = speed_trial.Draws(inputs), gpu_sync.work_done
    due = lambda calls, args: speed.calls_due(gpu_sync.reports_due, calls, args)  # noqa: E731
    return speed_trial.trial(
        speed_trial.LocalSide(unfixed, draws, who="The unfixed code", record=speed.recording, due=due, work=work),
        speed_trial.LocalSide(train, draws, who="Your function", record=speed.recording, work=work),
        exercise="demo",
        target=0.2,  # the order of the reports is under test here, not the speed
        close=speed_trial.Closeness(1e-4, 1e-5),
        pairs=3,
        work=True,
    )


def test_reports_held_back_on_the_timed_calls_only_fail_the_speed_check(monkeypatch):
    """The speed check's tally notes the runs queued at each report, without a wait: a loop that reports while it
    trains passes, even a block late; one that holds its reports back to the end only once the calls are no longer the
    first (as the timed ones are) is refused at a timed call, and passes with that rule turned off."""
    calls = []

    def late_once_timed(w0, xs, ys, report, every):
        calls.append(1)
        return _training("on time" if len(calls) <= 2 else "at the end")(w0, xs, ys, report, every)

    for when in ("on time", "a block late"):
        verdict = _timed(_training(when))
        assert verdict.passed, verdict.problem or verdict.measured
    verdict = _timed(late_once_timed)
    assert not verdict.passed and "in a timed call, its report 1 of 4 was made after 40 runs" in verdict.problem
    assert "the unfixed code's next report came after 20" in verdict.problem
    from tfperf.grading import speed_trial

    monkeypatch.setattr(speed_trial, "_calls_back_in_time", lambda got, due: None)
    calls.clear()
    verdict = _timed(late_once_timed)
    assert verdict.passed, verdict.problem or verdict.measured


def test_a_loop_that_does_not_run_the_courses_step_once_per_step_fails():
    with pytest.raises(grading.GradingFailure, match="ran gpu_sync.train_step 0 times; expected 30, once per step"):
        _checked(_training("own steps"), 30, 10, 3)


def test_marked_runs_tell_the_counted_training_from_a_decoy():
    """With ``marks``, only weights trained by the counted runs match a reference marked by the same seed: a run
    trained with train_step's arithmetic written out, its counted runs spent on a copy, does not."""
    from tfperf.experiments import gpu_sync

    @tf.function
    def own_steps(w, xs, ys):  # the real run, by arithmetic the count does not see
        for i in tf.range(tf.shape(xs)[0]):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(tf.matmul(xs[i], w) - ys[i]))
            w.assign_sub(gpu_sync.LEARNING_RATE * tape.gradient(loss, w))

    def decoy(w0, xs, ys, report, every):
        w, copy = tf.Variable(w0), tf.Variable(w0)
        own_steps(w, xs, ys)
        for start in range(0, int(xs.shape[0]), every):  # counted runs on a copy, a report after each block
            loss = gpu_sync.train_steps(copy, xs[start : start + every], ys[start : start + every])
            report(start + every - 1, float(loss))
        return w.read_value()

    w0, xs, ys = gpu_sync.make_problem(30, seed=1)
    args = (w0, xs, ys, lambda step, loss: None, 10)
    for train, matches in ((_training("on time"), True), (decoy, False)):
        with gpu_sync.marked(gpu_sync.draw_marks()) as marks:
            expected = _training("on time")(*args)
        got = grading.assert_host_syncs_at_most(train, args, 3, what="train", reports_every=10, steps=30, marks=marks)
        assert np.allclose(got, expected, rtol=1e-4, atol=1e-5) == matches
    without = grading.assert_host_syncs_at_most(decoy, args, 3, what="train", reports_every=10, steps=30)
    assert np.allclose(without, _training("on time")(*args), rtol=1e-4, atol=1e-5)  # unmarked, the decoy passes


def test_marked_runs_given_other_batches_or_weights_fail():
    """With ``marks``, the counted runs must be given what the reference's were: a run on a probe, to measure its
    step size for arithmetic of the answer's own, is refused, as is one given a batch of the answer's making."""
    from tfperf.experiments import gpu_sync

    def probed(w0, xs, ys, report, every):
        w, probe, one = tf.Variable(w0), tf.Variable(tf.zeros([1, 1])), tf.ones([1, 1])
        for i in range(int(xs.shape[0])):
            probe.assign(tf.zeros([1, 1]))
            gpu_sync.train_step(probe, one, one)  # its move is 2 * rate: the marked rate of this run
            rate = -probe[0, 0] / 2
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(tf.matmul(xs[i], w) - ys[i]))
            w.assign_sub(rate * tape.gradient(loss, w))
            if (i + 1) % every == 0:
                report(i, float(loss))
        return w.read_value()

    w0, xs, ys = gpu_sync.make_problem(20, seed=2)
    args = (w0, xs, ys, lambda step, loss: None, 10)
    with gpu_sync.marked(gpu_sync.draw_marks()) as marks:
        expected = _training("on time")(*args)
    with pytest.raises(grading.GradingFailure, match="runs were not given the batches"):
        grading.assert_host_syncs_at_most(probed, args, 99, what="train", reports_every=10, steps=20, marks=marks)
    got = grading.assert_host_syncs_at_most(probed, args, 99, what="train", reports_every=10, steps=20)
    assert not np.allclose(got, expected, rtol=1e-4, atol=1e-5)  # unmarked, only the weights could tell


def test_the_steps_run_count_steps_inside_graphs_and_xla():
    from tfperf.experiments import gpu_sync

    w0, xs, ys = gpu_sync.make_problem(12, seed=1)
    w, before = tf.Variable(w0), gpu_sync.steps_run()
    gpu_sync.train_step(w, xs[0], ys[0])
    gpu_sync.train_steps(w, xs[1:6], ys[1:6])

    @tf.function(jit_compile=True)
    def block(xs, ys):
        for i in tf.range(tf.shape(xs)[0]):
            gpu_sync.train_step(w, xs[i], ys[i])

    block(xs[6:], ys[6:])
    assert gpu_sync.steps_run() - before == 12
