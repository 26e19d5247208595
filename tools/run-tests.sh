#!/usr/bin/env bash
# The whole test suite, as `make test` runs it: PYTHON [PYTEST_ARGS...]
#
# 1. The round trip (tests/grading) alone: it grades in two lanes, one core each, and its speed checks need
#    those cores to themselves; after it, the other tests marked `alone` (pyproject.toml), still with the machine to
#    themselves.
# 2. Everything else as two pytest processes side by side (the class-grading and notebook tests, with the unit and
#    browser tests named in BESIDE_CLASS_GRADING; the other browser, unit and style tests): together they take about
#    half the time of one after the other.
# Each part's output goes to test-artifacts/pytest-<part>.log and is printed when the part ends; a
# --junitxml=FILE argument becomes one file per part (FILE with -<part> before its extension).
# Exit status: 0 when every part passed (or selected no test: pytest's status 5), else the first failure's.
set -u
python=$1
shift
mkdir -p test-artifacts

args_for() {  # the arguments, with --junitxml=FILE made per part
  local part=$1 arg
  shift
  for arg in "$@"; do
    case $arg in
      --junitxml=*) file=${arg#--junitxml=}; echo "--junitxml=${file%.*}-$part.${file##*.}" ;;
      *) echo "$arg" ;;
    esac
  done
}

run_part() {  # part, then paths: pytest on them, its output in the part's log
  local part=$1
  shift
  local -a extra
  mapfile -t extra < <(args_for "$part" "${PYTEST_EXTRA[@]}")
  # --durations: the part's slowest tests at the end of its log, for balancing the parts below
  "$python" -m pytest --durations=20 "$@" "${extra[@]}" >"test-artifacts/pytest-$part.log" 2>&1
}

PYTEST_EXTRA=("$@")
PARTS=(tests/grading tests/classgrading tests/notebooks tests/browser tests/unit tests/test_python_style.py)
for found in tests/*/ tests/test_*.py; do  # a new folder of tests must be given a part here
  found=${found%/}
  if [[ " ${PARTS[*]} " != *" $found "* ]] && [ "$found" != tests/__pycache__ ]; then
    echo "tools/run-tests.sh runs no part with $found: add it to a part" >&2
    exit 2
  fi
done
status=0
note() {  # a part's status: 5 (nothing selected) counts as passed
  local part=$1 code=$2
  echo "== $part: pytest exited with $code (its log: test-artifacts/pytest-$part.log)"
  if [ "$code" -ne 0 ] && [ "$code" -ne 5 ] && [ "$status" -eq 0 ]; then status=$code; fi
}

# The machine, for reading the times below: the same suite (one commit) took 1164 s on a 2-CPU AMD EPYC with AVX-512
# and 1937 s on a 2-CPU Intel Xeon; the code before it 2270 to 2396 s on a 2-CPU AMD EPYC without AVX-512, Python and
# TensorFlow alike slower (docs/measurements-grading.md, "fifth pass" and "tenth pass"). TensorFlow's oneDNN operations
# are on by default only where the CPU has AVX512_VNNI, AVX512_BF16, AVX_VNNI or AMX (tensorflow/core/util/port.cc).
cpu_model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)
cpu_flags=" $(sed -n 's/^flags[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1) "
neural=$(for f in avx512_vnni avx512_bf16 avx_vnni amx_tile; do [[ $cpu_flags == *" $f "* ]] && printf '%s ' "$f"; done)
onednn=$([ -n "$neural" ] && echo "on (${neural% })" || echo off)
[ -n "${TF_ENABLE_ONEDNN_OPTS:-}" ] && onednn="$onednn, but TF_ENABLE_ONEDNN_OPTS=$TF_ENABLE_ONEDNN_OPTS decides"
echo "== the machine: $(nproc) CPUs, ${cpu_model:-unknown model}; AVX-512: $([[ $cpu_flags == *" avx512f "* ]] && echo yes || echo no); oneDNN by default, from the CPU's flags: $onednn"
# The venv's Python: which build it is changes the suite's time (.ci/run says by how much).
echo "== the Python: $("$python" -c 'import sys; print(sys.version.split()[0], "from", sys.base_prefix)')"
# The files of the tests marked `alone` (besides the round trip): another process's load would change what they measure.
mapfile -t ALONE < <(grep -rlE --include='*.py' 'mark\.alone' tests/unit tests/classgrading tests/browser tests/notebooks | sort)
started=$(date +%s)
echo "== 1/2: the round trip (tests/grading), alone; then the other tests marked alone (${#ALONE[@]} files)"
run_part roundtrip -m alone tests/grading "${ALONE[@]}"
code=$?
cat test-artifacts/pytest-roundtrip.log
note roundtrip $code

echo "== 2/2: class grading and notebooks, beside browser, unit and style tests"
# Tests named here run beside class grading instead of in the other part, so that the two processes end together: move
# tests by the seconds each part's log reports (--durations), and write the split's history, with its measurements, in
# docs/measurements-grading.md ("How the second part is split").
BESIDE_CLASS_GRADING=(
  tests/unit/autograding/test_outside.py tests/unit/autograding/test_recheck.py
  tests/unit/autograding/test_forkserver.py tests/unit/authoring/test_report.py tests/unit/grading/test_grading_guard.py
  tests/unit/autograding/test_autograding.py tests/unit/autograding/test_judge.py
  tests/browser/test_setups.py tests/browser/test_profile_views.py tests/unit/measure/test_ceilings.py
  tests/unit/test_cli.py
)
run_part classgrading -m "not alone" tests/classgrading tests/notebooks "${BESIDE_CLASS_GRADING[@]}" &
first=$!
run_part rest -m "not alone" tests/browser tests/unit "${BESIDE_CLASS_GRADING[@]/#/--ignore=}" tests/test_python_style.py
code_rest=$?
wait $first
code_first=$?
cat test-artifacts/pytest-classgrading.log
note classgrading $code_first
cat test-artifacts/pytest-rest.log
note rest $code_rest

# CPU time of the processes the parts ran and waited for (bash's `times`, children's line): a process's time reaches it
# only through every parent between them waiting for it, and in the sixth pass (docs/measurements-grading.md) it counted
# 42.5 minutes while both cores were about 95% busy for 47. Compare it between runs of the same work only.
times >test-artifacts/times.txt  # in this shell: a command substitution's subshell has waited for nothing
cpu=$(tail -n 1 test-artifacts/times.txt)
echo "== the whole suite: $(( $(date +%s) - started )) s; CPU time (user, system) ${cpu/ /, }; exit status $status"
exit $status
