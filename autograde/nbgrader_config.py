"""nbgrader configuration of the course. Run nbgrader commands from this folder.

    nbgrader generate_assignment 01_tensors   # solutions/01_tensors -> notebooks/01_tensors
    nbgrader autograde 01_tensors             # grades submitted/<student>/01_tensors/
    nbgrader generate_feedback 01_tensors
    nbgrader export                           # grades.csv

See docs/instructors.md.
"""

import atexit
import os
import shutil
import sys
import tempfile
import warnings
from pathlib import Path

from jupyter_core.paths import jupyter_data_dir
from nbconvert.preprocessors import ClearMetadataPreprocessor
from nbgrader.converters import GenerateAssignment
from nbgrader.preprocessors import (
    AssignLatePenalties,
    CheckCellMetadata,
    ClearOutput,
    ClearSolutions,
    DeduplicateIds,
    IgnorePattern,
    LimitOutput,
    OverwriteKernelspec,
    SaveAutoGrades,
)

from tfperf.autograding import sandbox
from tfperf.autograding.outside import GradeOutsideKernel
from tfperf.autograding.preprocessors import (
    ClearSolutionsWithPlaceholders,
    GradingExecute,
    RefuseLinks,
    RemoveLinks,
    RestoreCells,
    ScreenAnswers,
)
from tfperf.runtime.logs import NOISE_PATTERN

c = get_config()  # noqa: F821 (provided by nbgrader)
here = Path(__file__).resolve().parent

c.CourseDirectory.root = str(here)
c.CourseDirectory.course_id = "tf-gpu-performance"
# solutions/ is the single source; notebooks/ receives the generated student versions.
c.CourseDirectory.source_directory = "../solutions"
c.CourseDirectory.release_directory = "../notebooks"

# nbgrader's exchange (Release and Collect; learners' Fetch and Submit). nbgrader sets its root to mode
# 0777 at every release, so that every learner can submit into it: it never goes in the checkout.
# Shared (other accounts, a JupyterHub): nbgrader's own default, /usr/local/share/nbgrader/exchange,
# used as soon as an administrator has created it; or set c.Exchange.root here to the hub's shared
# volume. Single user (otherwise): a private exchange in the instructor's Jupyter data folder, inside a
# folder that only its owner can enter (docs/instructors.md, "Formgrader in JupyterLab").
SHARED_EXCHANGE = Path("/usr/local/share/nbgrader/exchange")  # nbgrader's default Exchange.root
if not SHARED_EXCHANGE.is_dir():
    _private = Path(jupyter_data_dir()) / "nbgrader-private"
    c.Exchange.root = str(_private / "exchange")
    try:  # nbgrader checks that the exchange exists; it does not create it
        _private.mkdir(mode=0o700, parents=True, exist_ok=True)
        _private.chmod(0o700)
        (_private / "exchange").mkdir(exist_ok=True)
    except OSError:  # a read-only home (a sandboxed grader): Release and Collect are not needed there
        pass

# Student versions: a solution region becomes this stub. Inside a function, a Check cell that calls it
# says "... is not written yet. Reread the section ..."; at the top level of a cell, nbgrader's
# ClearSolutions is replaced (GenerateAssignment.preprocessors, below) by one that makes it placeholders
# for the names the answer defines (tfperf.autograding.preprocessors.ClearSolutionsWithPlaceholders), which the Check cells report the
# same way (instead of a NameError), and the cell runs quietly.
c.ClearSolutions.code_stub = {
    "python": '# YOUR CODE HERE\nraise NotImplementedError("Not written yet: replace this line with your answer '
    '(the exercise says what to write and which section to reread).")'
}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"

# Execution while grading. Throughput checks time code for a few seconds; a cell that
# runs away (an endless loop) is interrupted after this many seconds, costs its own
# points only, and grading goes on with the next cell.
c.Execute.timeout = 180
c.Execute.interrupt_on_timeout = True
# Grade in the sandboxed kernel (tfperf.autograding.sandbox; install it once with
# `python -m tfperf.autograding.sandbox install`): the course's interpreter under bubblewrap, with a
# read-only view of the system, the course and the gradebook, a private working folder and
# /tmp, no network, CPU-time and memory limits. Learners' own JupyterLab keeps "python3".
c.Execute.kernel_name = sandbox.KERNEL_NAME
# Without a network the kernel talks to nbgrader over Unix sockets (ZeroMQ ipc), in a folder
# of this run's own: the only folder besides its working folder that the kernel can write.
_sockets = Path(tempfile.mkdtemp(prefix="tfperf-grading-"))
atexit.register(shutil.rmtree, _sockets, ignore_errors=True)
c.KernelManager.transport = "ipc"
c.KernelManager.ip = str(_sockets / "kernel")
# What learner code must not even read: the gradebook, the other students' work, the feedback,
# the instructor's source (hidden tests), the grading reports (other students' scores and
# failures: `python -m tfperf grade`), the exported grades. Everything else is read-only to it.
os.environ[sandbox.HIDE_ENV] = os.pathsep.join(
    str(path)
    for path in (
        here / "gradebook.db",
        here / "submitted",
        here / "autograded",
        here / "feedback",
        here / "reports",
        here / "grades.csv",
        here.parent / "solutions",
    )
)
if sys.argv[1:2] == ["autograde"]:
    sandbox.require()  # bubblewrap and the kernelspec, or an error that says how to install them


def importable(cls: type) -> str:
    """A preprocessor by its import name: nbconvert imports it from that, and the configuration stays JSON
    (Formgrader shows it in its "Current configuration" panel; classes garbled it there)."""
    return f"{cls.__module__}.{cls.__qualname__}"


# Releasing (nbgrader generate_assignment, Formgrader's Generate, make student): nbgrader's own steps, with
# the placeholders above where ClearSolutions stood. Always over the existing release: the checkout has
# the student versions already (notebooks/), and without --force nbgrader skips an existing release and,
# with it, the gradebook entry that grading needs (it printed "Skipping existing assignment"). The
# release is generated from solutions/ and comes out the same, so git status stays clean.
c.GenerateAssignment.force = True
c.GenerateAssignment.preprocessors = [
    importable(ClearSolutionsWithPlaceholders if p is ClearSolutions else p)
    for p in GenerateAssignment.class_traits()["preprocessors"].default()
]

# Honest work is not lost (tfperf.autograding.preprocessors): a kernel that dies costs the exercise it died in
# only, and every instructor cell (locked cells, test cells, their metadata) is
# restored from the gradebook, and put back where a submission lacks it.
# Students kept apart (tfperf.autograding.preprocessors.RefuseLinks): a submission whose folder holds a link is not graded,
# and the links a kernel leaves in its folder are removed before nbgrader writes there.
c.Autograde.sanitize_preprocessors = [
    importable(p)
    for p in (RefuseLinks, ClearOutput, DeduplicateIds, OverwriteKernelspec, RestoreCells, CheckCellMetadata)
]
# After running a submission, its answer cells are screened statically (tfperf.autograding.preprocessors.ScreenAnswers): an
# answer that changes the grading (module attributes, kernel hooks, threads, the environment,
# given code...) scores 0 for its exercise, with the reason in the feedback, and every finding
# goes to reports/screen.jsonl. Set c.ScreenAnswers.penalize = False to report without zeroing.
c.Autograde.autograde_preprocessors = [
    importable(p)
    for p in (
        GradingExecute,
        RemoveLinks,
        IgnorePattern,
        ScreenAnswers,
        GradeOutsideKernel,
        ClearMetadataPreprocessor,
        LimitOutput,
        SaveAutoGrades,
        AssignLatePenalties,
        CheckCellMetadata,
    )
]
# Grades decided out of the learner's reach (tfperf.autograding.outside): the kernel runs the notebook for
# the learner's outputs, but not the test cells of written answers; each such exercise is graded in a
# fresh sandboxed worker of its own (the instructor's cells, that answer, the instructor's test cells),
# and only what that worker reports is scored. An answer still at its placeholder scores 0.
c.GradingExecute.tests_outside = True
c.GradeOutsideKernel.enabled = True
c.ScreenAnswers.report = str(here / "reports" / "screen.jsonl")
# nbconvert preprocessors (unlike nbgrader's own) are off unless enabled: without this line the
# screen above never ran (found by tests/classgrading: an os.environ answer kept its points).
c.ScreenAnswers.enabled = True

# nbgrader scores a test cell 0 if it writes to stderr. TensorFlow writes log lines there
# on its own (oneDNN notice, cuInit on CPU machines): drop exactly those, and Python
# warnings, from graded outputs. The checks themselves also capture stderr.
c.IgnorePattern.enabled = True
c.IgnorePattern.pattern = NOISE_PATTERN

# nbgrader 0.9's gradebook, on SQLAlchemy 2, warns three times per autograde that a new submission "not in
# session" is not cascaded (nbgrader.api.Gradebook.add_submission adds it itself, and grades are complete:
# tests/classgrading check every score through the Gradebook API): noise in every student's log.
warnings.filterwarnings("ignore", message=r"Object of type <Submitted\w+> not in session", module=r"nbgrader\.api")

# Settings for the grading kernel, inherited through the environment.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
# Demonstration cells run small while grading; graded exercises have fixed sizes.
os.environ.setdefault("TFPERF_SIZE", "ci")
# This course's throughput targets, if calibrated (make calibrate), override the defaults.
if (here / "targets.toml").is_file():
    os.environ.setdefault("TFPERF_TARGETS", str(here / "targets.toml"))
# nbgrader runs alembic as a subprocess: make sure this interpreter's bin/ is on PATH.
os.environ["PATH"] = str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", "")
