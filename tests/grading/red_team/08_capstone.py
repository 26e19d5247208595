"""Red team, chapter 8: a diagnosis that reads the script instead of measuring it (its closure, the withheld variant
maker), one that looks for the check on the call stack, codes that compare equal to anything; a record of a run that
is not the run (fewer steps than it says), and one that changes the registry's check of completeness.

Classes of the grading-integrity issue: (2) changing what the grader reads, (3) reaching the value by another path,
(4) behaving differently when a check is on the stack."""

from tests.grading.submission import Submission, reference_source

_FIXED = reference_source("08_capstone", "fixed_script")

_DIAGNOSE_TESTS = ("input_bound", "eager_steps", "retracing", "host_read_every_step", "print_in_step")
_ALL_DIAGNOSE_TESTS = {f"diagnose_{p}_tests": 0 for p in _DIAGNOSE_TESTS}

RED_TEAM = [
    # (3) The pitfalls read from the closure of train (the script's switches), not measured: flagged by the screen
    #     (a dunder attribute).
    Submission(
        "red3_reads_the_closure",
        {
            "diagnose": """def diagnose_codes(train):
    cells = [cell.cell_contents for cell in train.__closure__]
    return set(next(c for c in cells if isinstance(c, frozenset)))
"""
        },
        _ALL_DIAGNOSE_TESTS,
    ),
    # (3) The withheld maker of the scripts called to compare: flagged (withheld).
    Submission(
        "red3_calls_the_variant_maker",
        {
            "diagnose": """def diagnose_codes(train):
    return set(cs.variant(None, 0).pitfalls)
"""
        },
        _ALL_DIAGNOSE_TESTS,
    ),
    # (4) Behaves differently under the check: looks for it on the stack (flagged: frames), guesses otherwise.
    Submission(
        "red4_check_on_the_stack",
        {
            "diagnose": """import traceback
def diagnose_codes(train):
    if any("check_diagnosis" in line for line in traceback.format_stack()):
        return {"input-bound"}
    return set()
"""
        },
        _ALL_DIAGNOSE_TESTS,
    ),
    # (2) A code that compares equal to anything, in a list: refused (codes are plain str).
    Submission(
        "red2_code_equal_to_anything",
        {
            "diagnose": """class Anything(str):
    def __eq__(self, other):
        return True
    __hash__ = str.__hash__

def diagnose_codes(train):
    return [Anything("input-bound")]
"""
        },
        _ALL_DIAGNOSE_TESTS,
    ),
    # (3) The record says 8 steps and trains 2: the check counts the steps the script ran.
    Submission(
        "red3_record_says_more_steps",
        {
            "record": """def record_run(runs, script, steps):
    with runs.record("capstone", hyperparameters={"batch": script.batch, "steps": steps},
                     data_hash=cs.data_hash(script)) as run:
        run.metrics = {"loss": script.train(2)}
        run.examples = steps * script.batch
    return run
"""
        },
        {"record_tests": 0},
    ),
    # (2) The registry's own list of required fields emptied, so that an empty row looks complete: flagged (an
    #     attribute of the library changed from outside).
    Submission(
        "red2_required_fields_emptied",
        {
            "record": """registry.Run.REQUIRED = ()
def record_run(runs, script, steps):
    script.train(steps)
    return runs.add(registry.Run("capstone", status="finished"))
"""
        },
        {"record_tests": 0},
    ),
    # (3) Exercise 3 reached by another path: the chapter's own script with every switch off. The static screen flags
    #     cs.make_training (withheld from this exercise) and zeroes it; were it let through, its results are the
    #     script's, and check_fixed_script sees cs.make_training called (tests/unit/grading/test_grading_diagnoses.py).
    Submission(
        "red3_the_chapters_own_fixed_script",
        {
            "fixed_script": """def make_fixed_training(x, y, *, batch, width, seed):
    script = cs.make_training((), batch=batch, width=width, seed=seed, data=(x, y))
    def train(steps):
        return script.train(steps)
    return train, script.model
"""
        },
        {"fixed_script_tests": 0, "fixed_script_speed_tests": 0},
    ),
    # (2) Exercise 3, the baseline slowed: the reference fix, and the chapter's script made slower through the
    #     module's dictionary (past the sealed module). Outside the kernel the unfixed code's worker never runs the
    #     answer; in the answer's worker the guard sees the library changed: 0 for both cells.
    Submission(
        "red2_script_as_written_slowed",
        {
            "fixed_script": _FIXED
            + """
import time as _time
_original = cs.make_training
def _slow(*args, **kwargs):
    _time.sleep(0.5)
    return _original(*args, **kwargs)
vars(cs)["make_training"] = _slow
"""
        },
        {"fixed_script_tests": 0, "fixed_script_speed_tests": 0},
    ),
    # (2) Exercise 3, what the check reads changed: the reference fix, which removes Python's profile hook (where
    #     check_fixed_script looks for the chapter's own script) when it builds the script: the static screen flags
    #     sys.setprofile and zeroes the exercise (were it let through, check_fixed_script fails where the hook is gone:
    #     tests/unit/grading/test_grading_diagnoses.py).
    Submission(
        "red2_profile_hook_removed",
        {
            "fixed_script": _FIXED.replace(
                '    """cs.make_training\'s script',
                '    import sys\n    sys.setprofile(None)\n    """cs.make_training\'s script',
            )
        },
        {"fixed_script_tests": 0, "fixed_script_speed_tests": 0},
    ),
    # (4) Exercise 3, behaves differently where the results are compared strictly: honest inside a device scope (the
    #     result check runs on the CPU, in one), one step short everywhere else (the speed check's timed calls). The
    #     screen lets the private import through; the result check's run on this device and every timed call's
    #     comparison catch the missing step (2.45e-3 to 3.64e-3 away, allowed 1.2e-3 + 1e-3 of the weight): 0 and 0.
    Submission(
        "red4_honest_only_in_a_cpu_scope",
        {
            "fixed_script": _FIXED.replace(
                "    def train(steps):\n        loss = None\n        for _ in range(steps):",
                "    from tensorflow.python.eager import context\n\n"
                "    def train(steps):\n        loss = None\n"
                "        for _ in range(steps if context.context().device_name else steps - 1):",
            )
        },
        {"fixed_script_tests": 0, "fixed_script_speed_tests": 0},
    ),
]
