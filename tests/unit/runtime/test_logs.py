import logging
import os
import subprocess
import sys
import warnings

from tfperf.runtime import logs


def test_captured_stderr_catches_every_kind_of_stderr_output(capfd):
    with logs.captured_stderr() as captured:
        print("python-level", file=sys.stderr)
        os.write(2, b"native-level\n")
        warnings.warn("a learner's warning")
        logging.getLogger("tensorflow").warning("retracing warning")
    out, err = capfd.readouterr()
    assert err == ""  # nothing escaped
    assert "python-level" in captured.python
    assert "native-level" in captured.native
    assert any("a learner's warning" in w for w in captured.warnings)


def test_captured_stderr_restores_stderr_even_after_an_exception(capfd):
    try:
        with logs.captured_stderr():
            raise RuntimeError("boom")
    except RuntimeError:
        pass
    os.write(2, b"after\n")
    print("after-python", file=sys.stderr)
    assert "after" in capfd.readouterr().err
    logging.getLogger("x").warning("logging works again")
    assert logging.root.manager.disable == 0


def test_noise_pattern_matches_tensorflows_real_startup_lines():
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    proc = subprocess.run(
        [sys.executable, "-c", "import tensorflow as tf; print(float(tf.constant(1.0) + 1))"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.stdout.strip() == "2.0"
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert all(logs.is_noise(line) for line in lines), lines


def test_noise_pattern_matches_cuinit_and_warnings_but_not_errors():
    assert logs.is_noise(
        "E0000 00:00:1700000000.123456    1234 cuda_executor.cc:1228] failed call to cuInit: "
        "INTERNAL: CUDA error: Failed call to cuInit: UNKNOWN ERROR (303)"
    )
    assert logs.is_noise("/x/y.py:3: UserWarning: something")
    assert not logs.is_noise("Traceback (most recent call last):")
    assert not logs.is_noise("ValueError: bad input")


def test_replay_keeps_only_real_messages(capsys):
    captured = logs.Captured(native="I0000 00:00:1.0  1 port.cc:153] oneDNN custom operations are on.\nreal problem\n")
    logs.replay_unless_noise(captured)
    assert capsys.readouterr().err.strip() == "real problem"


def test_quietly_drops_tensorflow_notices_but_keeps_real_messages(capfd):
    def noisy(x):
        os.write(2, b"I0000 00:00:1.0  1 port.cc:153] oneDNN custom operations are on.\n")
        os.write(2, b"a real problem\n")
        return x + 1

    assert logs.quietly(noisy, 1) == 2
    assert capfd.readouterr().err.strip() == "a real problem"


def test_tensorflow_is_imported_with_quiet_logs(monkeypatch):
    monkeypatch.delenv("TF_CPP_MIN_LOG_LEVEL", raising=False)
    tf = logs.tensorflow()
    assert hasattr(tf, "function") and os.environ["TF_CPP_MIN_LOG_LEVEL"] == "3"


def test_the_library_imports_tensorflow_inside_a_graph_without_autographs_warning(capfd):
    """Library code calls logs.tensorflow() inside learners' tf.functions (chapter 5's gpu_sync.train_step, first
    called in the learner's graph after a restart). In a notebook AutoGraph echoes its warnings on stdout; one about
    code it cannot convert, there, was counted by the prints check as the learner's print."""
    import sys

    from tensorflow.python.autograph.utils import ag_logging

    tf = logs.tensorflow()

    @tf.function
    def graph(x):
        return logs.tensorflow().identity(x) + 1

    echo = ag_logging.echo_log_to_stdout
    ag_logging.echo_log_to_stdout = True  # as in IPython (ag_logging sets it where sys.ps1 exists)
    try:
        assert float(graph(tf.constant(1.0))) == 2.0
    finally:
        ag_logging.echo_log_to_stdout = echo
    sys.stdout.flush()
    assert "AutoGraph could not transform" not in capfd.readouterr().out
