"""Round-trip cases of chapter 8 (08_capstone). Exercise 1: five test cells (1 point each, one per pitfall: a script
with it and one with none): a procedure without the Profiler (input-bound missed), one without a warm-up (a first
trace counted as retracing in every script), one that names every finding, a constant guess, and honest alternatives
(more steps and no device card; the tool's report read by code rather than codes()). Exercise 2: record_tests (1):
a record with a duration made up, one without the data's hash, and an honest record built by hand with
registry.Run and runs.add. Exercise 3: fixed_script_tests (1: the script's results, nothing printed) and
fixed_script_speed_tests (2: the diagnosis finds no pitfall, and the speed): every fix but the print, every fix but the
pipeline's, a loop one step short, and an honest alternative pipeline (preprocessed a batch at a time, cached)."""

from tests.grading.submission import Submission, reference_source

#: The reference answer of exercise 3, which the cases below change in one place each.
_FIXED = reference_source("08_capstone", "fixed_script")


def fixed(old: str, new: str) -> str:
    """The reference fixed script with ``old`` (which it must contain) replaced by ``new``."""
    assert old in _FIXED, old
    return _FIXED.replace(old, new)


_PREPROCESS_ONCE = "    features, labels = cs.preprocess(tf.constant(x), tf.constant(y))\n"
_BATCHED = (  # the reference's batches, cut before tf.data takes them
    "whole = len(x) // batch * batch  # the last, partial batch dropped\n"
    "    features = tf.reshape(features[:whole], (-1, batch, *features.shape[1:]))\n"
    "    labels = tf.reshape(labels[:whole], (-1, batch, *labels.shape[1:]))\n"
    "    dataset = tf.data.Dataset.from_tensor_slices((features, labels))"
)

_DIAGNOSE = """def diagnose_codes(train):
    with tempfile.TemporaryDirectory() as logdir:
        found = tfperf.diagnose(train, steps={steps}, warmup={warmup}, card=None{profile})
    return {result}
"""
_ALL_DIAGNOSE_TESTS = {
    f"diagnose_{p}_tests": 0
    for p in ("input_bound", "eager_steps", "retracing", "host_read_every_step", "print_in_step")
}


def diagnose(steps=10, warmup=3, profile=", profile_dir=logdir", result="set(found.codes())"):
    return _DIAGNOSE.format(steps=steps, warmup=warmup, profile=profile, result=result)


SUBMISSIONS = [
    # Concept checks: two wrong letters; the right ones score.
    Submission(
        "concepts_two_wrong",
        {"concepts": 'why_warm_up = "b"\nfix_uncovers = "c"\ninput_wait = "a"\nsame_hash = "d"'},
        {"concepts_why_warm_up": 0, "concepts_input_wait": 0},
    ),
    # No profile: the tool does not check input-bound, so that script's cell gets nothing; the others score.
    Submission(
        "diagnose: no profiler",
        {"diagnose": diagnose(profile="")},
        {"diagnose_input_bound_tests": 0},
    ),
    # No warm-up: the first call of the step's tf.function traces inside the counted steps, named retracing in every
    # graph script, the one with no pitfall included: 0 everywhere.
    Submission("diagnose: no warm-up", {"diagnose": diagnose(warmup=0)}, _ALL_DIAGNOSE_TESTS),
    # Every finding the tool knows, whatever the script: wrong on the script with no pitfall.
    Submission(
        "diagnose: every code",
        {"diagnose": "def diagnose_codes(train):\n    return set(tfperf.diagnosis.findings.CATALOGUE)\n"},
        _ALL_DIAGNOSE_TESTS,
    ),
    # A constant guess, the most common cause: wrong on every script with no pitfall.
    Submission(
        "diagnose: a guess",
        {"diagnose": "def diagnose_codes(train):\n    return {'input-bound'}\n"},
        _ALL_DIAGNOSE_TESTS,
    ),
    # Honest alternative: more counted steps and profiled steps, a list instead of a set.
    Submission(
        "diagnose: longer, as a list",
        {
            "diagnose": """def diagnose_codes(train):
    logdir = tempfile.mkdtemp()
    found = tfperf.diagnose(train, steps=20, warmup=4, profile_dir=logdir, profile_steps=8)
    return [finding.code for finding in found.findings]
"""
        },
        {},
    ),
    # Exercise 2: a duration typed in, not measured: shorter than the steps can take.
    Submission(
        "record: duration made up",
        {
            "record": """def record_run(runs, script, steps):
    loss = script.train(steps)
    return runs.add(registry.Run("capstone", status="finished", hyperparameters={"batch": script.batch, "steps": steps},
                                 data_hash=cs.data_hash(script), duration_s=1e-6, examples=steps * script.batch,
                                 metrics={"loss": loss}))
"""
        },
        {"record_tests": 0},
    ),
    # Exercise 2: no data hash: the row cannot be compared with another run's.
    Submission(
        "record: no data hash",
        {
            "record": """def record_run(runs, script, steps):
    with runs.record("capstone", hyperparameters={"batch": script.batch, "steps": steps}) as run:
        run.metrics = {"loss": script.train(steps)}
        run.examples = steps * script.batch
    return run
"""
        },
        {"record_tests": 0},
    ),
    # Honest alternative: timed with the course's stopwatch, the row built by hand (throughput left to the registry).
    Submission(
        "record: by hand",
        {
            "record": """def record_run(runs, script, steps):
    from tfperf.measure import timing
    loss, seconds = timing.stopwatch(lambda: script.train(steps))
    return runs.add(registry.Run("capstone", status="finished",
                                 hyperparameters={"batch": script.batch, "steps": steps, "width": script.width},
                                 data_hash=registry.data_hash(*script.data), duration_s=seconds,
                                 examples=steps * script.batch, metrics={"loss": loss}))
"""
        },
        {},
    ),
    # Exercise 3: every fix but the print: it prints a line a step (0), and the diagnosis names print-in-step (0).
    Submission(
        "fixed: still prints",
        {
            "fixed_script": fixed(
                "            loss = step(features, labels, rate)",
                "            loss = step(features, labels, rate)\n            print('step', done[0])",
            )
        },
        {"fixed_script_tests": 0, "fixed_script_speed_tests": 0},
    ),
    # Exercise 3: every fix but the pipeline's (records preprocessed one at a time, nothing prefetched): the same
    # results (1), but the Profiler shows the steps waiting for their input: input-bound (0), whatever its speed.
    Submission(
        "fixed: all but the pipeline",
        {
            "fixed_script": fixed(_PREPROCESS_ONCE, "")
            .replace(
                _BATCHED,
                "options = tf.data.Options()\n    options.autotune.enabled = False\n"
                "    options.experimental_optimization.inject_prefetch = False\n"
                "    options.experimental_optimization.map_and_batch_fusion = False\n"
                "    dataset = tf.data.Dataset.from_tensor_slices((x, y)).map(cs.preprocess, synchronous=True)\n"
                "    dataset = dataset.batch(batch, drop_remainder=True).with_options(options)",
            )
            .replace("dataset.prefetch(tf.data.AUTOTUNE).repeat()", "dataset.repeat()")
        },
        {"fixed_script_speed_tests": 0},
    ),
    # Exercise 3: one step short (the loop from 1): other weights (0), and the speed check compares every result.
    Submission(
        "fixed: one step short",
        {"fixed_script": fixed("for _ in range(steps):", "for _ in range(1, steps):")},
        {"fixed_script_tests": 0, "fixed_script_speed_tests": 0},
    ),
    # Exercise 3, honest alternative: the records preprocessed a batch at a time inside the pipeline and cached (the
    # same values), then prefetched: full marks (measured here: 2.5x-3.9x on one core, no pitfall found).
    Submission(
        "fixed: batched map, cached",
        {
            "fixed_script": fixed(_PREPROCESS_ONCE, "").replace(
                _BATCHED,
                "dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(batch, drop_remainder=True)"
                ".map(cs.preprocess).cache()",
            )
        },
        {},
    ),
]
