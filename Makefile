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

.PHONY: help venv lab test test-fast student check-student normalize lint calibrate doctor lock clean

help:
	@echo "make lab            set up, then open the course in JupyterLab (your copies: my-work/)"
	@echo "make test           set up, then run the whole test suite (what CI runs)"
	@echo "make test-fast      library unit tests only (seconds)"
	@echo "make student        regenerate notebooks/ from solutions/ with nbgrader"
	@echo "make check-student  check that notebooks/ is what nbgrader generates"
	@echo "make normalize      strip outputs and normalize every notebook in git"
	@echo "make lint           the notebook rules (tfperf.nblint); ruff too, if it is installed"
	@echo "make calibrate      measure throughput targets on this machine (autograde/targets.toml)"
	@echo "make doctor         report the device TensorFlow sees and what is wrong with it"

venv:
	@tools/ensure-venv.sh "$(VENV)" "$(TF_VARIANT)"

# Learners work in my-work/ (their own copies, git-ignored): updating the course never touches them.
lab: venv
	$(BIN)/python -m tfperf workspace
	$(BIN)/jupyter lab $(if $(filter 0,$(shell id -u)),--allow-root,) my-work/

test: venv
	$(BIN)/python -m pytest $(PYTEST_ARGS)

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
	@if command -v ruff >/dev/null 2>&1; then ruff check . ; else echo "ruff not installed: skipped (pip install pre-commit && pre-commit install)"; fi

calibrate: venv
	$(BIN)/python -m tfperf calibrate --out autograde/targets.toml

doctor: venv
	$(BIN)/python -m tfperf doctor

# Refresh requirements/lock.txt from the current venv (after changing a pin).
lock: venv
	$(BIN)/python -m pip freeze --all --exclude-editable | grep -viE '^(pip|tensorflow|tensorflow[-_]cpu)==' > requirements/lock.txt.new
	mv requirements/lock.txt.new requirements/lock.txt

clean:
	rm -rf autograde/gradebook.db autograde/submitted autograde/autograded autograde/feedback autograde/release
