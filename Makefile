# The course's commands. `make help` lists them.
#
# Every target sets up its own environment first (tools/ensure-venv.sh): a venv
# that is reused as long as requirements/ is unchanged.

VENV       ?= .venv
# TensorFlow variant: gpu where nvidia-smi lists a GPU, cpu otherwise.
TF_VARIANT ?= $(shell nvidia-smi -L >/dev/null 2>&1 && echo gpu || echo cpu)
BIN        := $(abspath $(VENV))/bin
# nbgrader calls alembic as a subprocess: the venv's bin/ must be on PATH.
export PATH := $(BIN):$(PATH)
# Quiet TensorFlow's C++ logging in every process we start.
export TF_CPP_MIN_LOG_LEVEL ?= 3
PYTEST_ARGS ?=

.PHONY: help venv lab instructor test test-fast student check-student normalize lint calibrate doctor grade lock clean

help:
	@echo "make lab            set up, then open the course in JupyterLab (your copies: my-work/)"
	@echo "make instructor     set up, then open JupyterLab with nbgrader's Formgrader on the course (docs/instructors.md)"
	@echo "make test           set up, then run the whole test suite (what CI runs)"
	@echo "make test-fast      library unit tests only (seconds)"
	@echo "make student        regenerate notebooks/ from solutions/ with nbgrader"
	@echo "make check-student  check that notebooks/ is what nbgrader generates"
	@echo "make normalize      strip outputs and normalize every notebook in git"
	@echo "make lint           the notebook rules (tfperf.authoring.nblint), ruff check and ruff format --check"
	@echo "make calibrate      measure throughput targets on this machine (autograde/targets.toml)"
	@echo "make gpu-report     run every chapter on this device and write reports/<device>-<date>/report.md (REPORT_SIZE=ci: quick)"
	@echo "make doctor         report the device TensorFlow sees and what is wrong with it"
	@echo "make grade ASSIGNMENT=01_tensors [GRADE_ARGS='--jobs 2']  grade a class: feedback, grades.csv, summary (resumable)"

venv:
	@tools/ensure-venv.sh "$(VENV)" "$(TF_VARIANT)"

# JupyterLab as root (containers) needs --allow-root.
ALLOW_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root,)
# Learners do not use nbgrader's pages (assignment list, course list, formgrader: they need an
# exchange and a course configuration); tools/jupyterlab/learner turns them off for this server only.
LEARNER_CONFIG := $(CURDIR)/tools/jupyterlab/learner$(if $(JUPYTER_CONFIG_PATH),:$(JUPYTER_CONFIG_PATH),)

# Learners work in my-work/ (their own copies, git-ignored): updating the course never touches them.
# The first start opens chapter 1 (tfperf workspace --start-arg); later ones reopen what the learner left open.
# LAB_ARGS: more options for jupyter lab (e.g. LAB_ARGS="--no-browser --port=8890").
LAB_ARGS ?=
lab: venv
	start=$$($(BIN)/python -m tfperf workspace --start-arg) && \
	JUPYTER_CONFIG_PATH="$(LEARNER_CONFIG)" $(BIN)/jupyter lab $(ALLOW_ROOT) my-work/ $$start $(LAB_ARGS)

# Instructors: nbgrader reads autograde/nbgrader_config.py from the working directory; the server's
# root is the checkout, so Formgrader's links to ../solutions and ../notebooks open real files;
# tools/jupyterlab/instructor opens Formgrader's folder links in JupyterLab (tfperf.autograding.formgrader).
# Its own JupyterLab workspaces (git-ignored), so that it never reopens the tabs `make lab` left open;
# LabApp.default_url is the URL it prints and opens (ServerApp's is replaced by LabApp's /lab).
INSTRUCTOR_CONFIG := $(CURDIR)/tools/jupyterlab/instructor$(if $(JUPYTER_CONFIG_PATH),:$(JUPYTER_CONFIG_PATH),)
instructor: venv
	cd autograde && JUPYTER_CONFIG_PATH="$(INSTRUCTOR_CONFIG)" $(BIN)/jupyter lab $(ALLOW_ROOT) --ServerApp.root_dir=.. \
	  --LabApp.default_url=/lab/tree/autograde --LabApp.workspaces_dir="$(CURDIR)/autograde/.lab-workspaces" $(LAB_ARGS)

# The round trip alone (it uses every core), then the other tests as two processes side by side (tools/run-tests.sh).
test: venv
	@tools/run-tests.sh "$(BIN)/python" $(PYTEST_ARGS)

test-fast: venv
	$(BIN)/python -m pytest -m "not slow" $(PYTEST_ARGS)

student: venv
	$(BIN)/python -m tfperf.authoring release

check-student: venv
	$(BIN)/python -m tfperf.authoring check

normalize: venv
	$(BIN)/python -m tfperf.authoring normalize

lint: venv
	$(BIN)/python -m tfperf.authoring lint
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

calibrate: venv
	$(BIN)/python -m tfperf calibrate --out autograde/targets.toml

# Every chapter's measurements and graded checks on this device, in one Markdown report (docs/testing-on-a-gpu.md).
REPORT_SIZE ?= full
gpu-report: venv
	$(BIN)/python -m tfperf report --size $(REPORT_SIZE)

doctor: venv
	$(BIN)/python -m tfperf doctor

# Instructors: grade every submission of an assignment (docs/instructors.md, "Grading a class with one command").
GRADE_ARGS ?=
grade: venv
	@test -n "$(ASSIGNMENT)" || { echo "usage: make grade ASSIGNMENT=01_tensors [GRADE_ARGS='--jobs 2 --force']"; exit 2; }
	$(BIN)/python -m tfperf grade $(ASSIGNMENT) $(GRADE_ARGS)

# Refresh requirements/lock.txt from the current venv (after changing a pin), and Binder's copy of it.
lock: venv
	{ echo "# Exact versions of everything the course installs, except TensorFlow itself"; \
	  echo "# (requirements/tensorflow-cpu.txt or tensorflow-gpu.txt, chosen by the set-up)."; \
	  echo "# Regenerate with: make lock  (in a venv that has the course installed)"; \
	  $(BIN)/python -m pip freeze --all --exclude-editable | grep -viE '^(pip|tensorflow|tensorflow[-_]cpu|ruff|wheel)=='; \
	} > requirements/lock.txt.new
	mv requirements/lock.txt.new requirements/lock.txt
	{ echo "# Binder (repo2docker) has no GPU: the CPU build of TensorFlow and every pin of requirements/lock.txt."; \
	  echo "# Generated by \`make lock\` (and checked by tests/unit/test_binder.py): do not edit by hand."; \
	  grep -hv '^#' requirements/lock.txt requirements/tensorflow-cpu.txt | sed '/^$$/d'; } > binder/requirements.txt

clean:
	rm -rf autograde/gradebook.db autograde/submitted autograde/autograded autograde/feedback autograde/release autograde/reports autograde/grades.csv
