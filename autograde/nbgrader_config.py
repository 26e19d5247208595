"""nbgrader configuration of the course. Run nbgrader commands from this folder.

    nbgrader generate_assignment 01_tensors   # solutions/01_tensors -> notebooks/01_tensors
    nbgrader autograde 01_tensors             # grades submitted/<student>/01_tensors/
    nbgrader generate_feedback 01_tensors
    nbgrader export                           # grades.csv

See docs/instructors.md.
"""

import os
import sys
from pathlib import Path

from tfperf.logs import NOISE_PATTERN

c = get_config()  # noqa: F821 (provided by nbgrader)
here = Path(__file__).resolve().parent

c.CourseDirectory.root = str(here)
c.CourseDirectory.course_id = "tf-gpu-performance"
# solutions/ is the single source; notebooks/ receives the generated student versions.
c.CourseDirectory.source_directory = "../solutions"
c.CourseDirectory.release_directory = "../notebooks"

# A local exchange (git-ignored), so that Formgrader's Release and Collect work from `make instructor`'s
# server; on a JupyterHub, point this at the hub's shared exchange instead.
c.Exchange.root = str(here / "exchange")
try:
    (here / "exchange").mkdir(exist_ok=True)  # nbgrader checks that it exists; it does not create it
except OSError:  # a read-only checkout (a sandboxed grader): Release and Collect are not needed there
    pass

# Student versions: a solution region becomes this stub. Run as it is, it says what to do; a Check
# cell that calls an unwritten function says "... is not written yet. Reread the section ...".
c.ClearSolutions.code_stub = {
    "python": '# YOUR CODE HERE\nraise NotImplementedError("Not written yet: replace this line with your answer '
              '(the exercise says what to write and which section to reread).")'}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"

# Execution while grading. Throughput checks time code for a few seconds; a cell that
# runs away (an endless loop) is interrupted after this many seconds, costs its own
# points only, and grading goes on with the next cell.
c.Execute.timeout = 180
c.Execute.interrupt_on_timeout = True
# Grade with the same interpreter that runs nbgrader (the course's venv).
c.Execute.kernel_name = "python3"

# nbgrader scores a test cell 0 if it writes to stderr. TensorFlow writes log lines there
# on its own (oneDNN notice, cuInit on CPU machines): drop exactly those, and Python
# warnings, from graded outputs. The checks themselves also capture stderr.
c.IgnorePattern.enabled = True
c.IgnorePattern.pattern = NOISE_PATTERN

# Settings for the grading kernel, inherited through the environment.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
# Demonstration cells run small while grading; graded exercises have fixed sizes.
os.environ.setdefault("TFPERF_SIZE", "ci")
# This course's throughput targets, if calibrated (make calibrate), override the defaults.
if (here / "targets.toml").is_file():
    os.environ.setdefault("TFPERF_TARGETS", str(here / "targets.toml"))
# nbgrader runs alembic as a subprocess: make sure this interpreter's bin/ is on PATH.
os.environ["PATH"] = str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", "")
