"""Grades decided outside the kernel, with the real nbgrader and the course's configuration (issue 24).

An answer that hooks the kernel (an IPython input transformer that wraps every later cell in
``try``/``except``) made every later check of the notebook pass when the checks' outcome was the
kernel's: the unfixed answer of the next exercise earned its points. Graded outside the kernel, each
exercise in a fresh worker of its own, the hook reaches nothing. The static screen would also flag the
hooking answer (it imports IPython); it reports without zeroing here, so that what is shown is the
design, not the screen.
"""

from __future__ import annotations

import subprocess
import sys

import nbformat
import pytest

from tests.classgrading import toy
from tfperf.autograding import preprocessors

HOOK = """\
def square(x):
    return x * x
import IPython
def _forgive(lines):
    return ["try:\\n"] + ["    " + line for line in lines] + ["\\nexcept BaseException:\\n    pass\\n"]
IPython.get_ipython().input_transformers_post.append(_forgive)"""

#: The given loop, handed in as the "fast" answer: it cannot be 2x faster than itself.
UNFIXED_TOTAL = toy.GIVEN.replace("def slow_total(", "def fast_total(")

#: How the checks' outcome was decided before: by the kernel.
IN_KERNEL = ("--GradingExecute.tests_outside=False", "--GradeOutsideKernel.enabled=False")


def autograde(course, student: str, *options: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "nbgrader", "autograde", toy.ASSIGNMENT, f"--student={student}", "--force"]
        + ["--Execute.timeout=30", "--ScreenAnswers.penalize=False", *options],
        cwd=course,
        env=toy.course_env(course.parent),
        capture_output=True,
        text=True,
        timeout=600,
    )


#: Outside the kernel, an answer that imports IPython (to hook the kernel) runs restricted and is refused: its square,
#: right as it is, scores 0 there (tfperf.autograding.restricted); in the kernel, as before, it scored.
@pytest.mark.parametrize(
    "options, square_points, total_points",
    [((), 0.0, 0.0), (IN_KERNEL, 2.0, 3.0)],
    ids=["outside-the-kernel", "in-the-kernel-as-before"],
)
def test_a_kernel_hook_does_not_reach_the_next_exercises_grade(toy_course, options, square_points, total_points):
    reference = toy.variant("reference", toy.released(toy_course))
    hooked = toy.with_answer(toy.with_answer(reference, "answer_square", HOOK), "answer_total", UNFIXED_TOTAL)
    toy.submit(toy_course, "mallory", hooked)
    done = autograde(toy_course, "mallory", *options)
    assert done.returncode == 0, done.stdout + done.stderr
    # check_total fails for the unfixed answer (it is not 2x faster): the hook made the kernel say it passed
    assert toy.scores(toy_course)["mallory"] == {"check_square": square_points, "check_total": total_points}


def test_an_untouched_answer_scores_zero_whatever_the_kernel_says(toy_course):
    """The untouched square answer with a hook in the next answer cell: its check, run in the kernel after the
    hook, is wrapped and "passes" there; the grading process scores an answer still at its placeholder 0."""
    released = toy.released(toy_course)
    hook_in_total = HOOK.replace("def square(x):\n    return x * x", "def fast_total(n):\n    return n * (n - 1) // 2")
    # the hook comes after check_square in the notebook, so move its answer first: the kernel runs it first
    nb = toy.with_answer(released, "answer_total", hook_in_total)
    cells = nb.cells
    total = next(c for c in cells if c.metadata.get("nbgrader", {}).get("grade_id") == "answer_total")
    cells.remove(total)
    cells.insert(1, total)
    toy.submit(toy_course, "trent", nb)
    done = autograde(toy_course, "trent")
    assert done.returncode == 0, done.stdout + done.stderr
    # (and the hooked total answer, refused as it imports IPython: see above)
    assert toy.scores(toy_course)["trent"] == {"check_square": 0.0, "check_total": 0.0}


def test_without_a_kernel_every_grade_is_the_same(toy_course):
    """``GradingExecute.run_kernel = False``: no cell runs in a kernel, and every grade still comes from the
    exercises' workers: the reference full marks, the hooked unfixed answer what it earns outside the kernel (as
    above), an untouched notebook 0. Each code cell of the graded notebook says why it shows nothing of its own."""
    released = toy.released(toy_course)
    reference = toy.with_answer(
        toy.variant("reference", released), "answer_square", "def square(x):\n    return x * x\nprint('run here')"
    )
    hooked = toy.with_answer(toy.with_answer(reference, "answer_square", HOOK), "answer_total", UNFIXED_TOTAL)
    for student, nb in (("alice", reference), ("mallory", hooked), ("nobody", released)):
        toy.submit(toy_course, student, nb)
        done = autograde(toy_course, student, "--GradingExecute.run_kernel=False")
        assert done.returncode == 0, done.stdout + done.stderr
    assert {s: toy.scores(toy_course)[s] for s in ("alice", "mallory", "nobody")} == {
        "alice": {"check_square": 2.0, "check_total": 3.0},
        "mallory": {"check_square": 0.0, "check_total": 0.0},  # its answers refused or slow: see above
        "nobody": {"check_square": 0.0, "check_total": 0.0},
    }
    graded = nbformat.read(toy_course / "autograded" / "alice" / toy.ASSIGNMENT / toy.NOTEBOOK, as_version=4)
    shown = [o.get("text", "") for c in graded.cells if c.cell_type == "code" for o in c.outputs]
    assert not [text for text in shown if "run here" in text]  # the kernel would have printed it
    answers = [c for c in graded.cells if c.metadata.get("nbgrader", {}).get("solution")]
    assert answers and all(c.outputs[0]["text"] == preprocessors.WITHOUT_A_KERNEL for c in answers)


def test_without_a_kernel_needs_the_grades_decided_outside(toy_course):
    toy.submit(toy_course, "oscar", toy.variant("reference", toy.released(toy_course)))
    done = autograde(toy_course, "oscar", "--GradingExecute.run_kernel=False", "--GradingExecute.tests_outside=False")
    assert done.returncode != 0
    assert "run_kernel = False needs GradingExecute.tests_outside = True" in done.stdout + done.stderr
