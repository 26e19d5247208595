#!/usr/bin/env bash
# On the lent GPU machine, once ../shared/gpu-kit's pieces are unpacked in /tmp/acc (tools/measure/gpu_unpack.py) and
# the real cuDNN in /tmp/acc/site/cudnn: the checks a GPU session runs, in order of need, each under its own time
# limit and all within DEADLINE seconds (default 480). Run from the course's root; writes under $OUT. See
# docs/testing-on-a-gpu.md. bubblewrap (the grading sandbox) is taken from /tmp/acc/bin/bwrap where the session put
# one there (the machine has none).
set -u
A=/tmp/acc
L=$A/site/nvidia
export PYTHONPATH=$A/site:$PWD/src
# cuDNN lies in the site folder: the grading sandbox replaces /tmp and keeps only the folders of sys.path in it.
export LD_LIBRARY_PATH=$L/cublas/lib:$L/cuda_runtime/lib:$L/cuda_cupti/lib:$L/cufft/lib:$L/cusolver/lib:$L/cusparse/lib:$A/site/cudnn
export XLA_FLAGS="--xla_gpu_cuda_data_dir=$L/cuda_nvcc"
mkdir -p "$A/bin"
# The kit's console scripts were written for the build machine's interpreter: nbgrader, jupyter and alembic (nbgrader
# runs it) through this one.
for tool in nbgrader jupyter alembic; do printf '#!/bin/sh\nexec python3 -m %s "$@"\n' "$tool" >"$A/bin/$tool"; chmod +x "$A/bin/$tool"; done
export PATH=$A/bin:$L/cuda_nvcc/bin:$PATH
# nbconvert's templates (nbgrader's feedback): the kit's data files, where Jupyter always looks.
mkdir -p ~/.local/share/jupyter && ln -sfn "$A/site/share/jupyter/nbconvert" ~/.local/share/jupyter/nbconvert
export PYTHONUNBUFFERED=1 TF_CPP_MIN_LOG_LEVEL=3
OUT=${OUT:-/tmp/out}
R=/tmp/reports
mkdir -p "$OUT" "$R"
start=$(date +%s)
deadline=${DEADLINE:-480}

limit_for() {  # limit_for LIMIT: LIMIT, or less where the deadline comes first
  local left=$((deadline - ($(date +%s) - start) - 15))
  if [ "$left" -lt "$1" ]; then echo "$left"; else echo "$1"; fi
}

step() {  # step NAME LIMIT COMMAND...: run it, at most LIMIT s and never past the deadline; log under $R
  local name=$1 limit
  limit=$(limit_for "$2")
  shift 2
  if [ "$limit" -lt 20 ]; then echo "== $name: skipped (no time left)"; return; fi
  echo "== $name (at most ${limit}s) from $(($(date +%s) - start))s"
  local s=$(date +%s)
  timeout "$limit" "$@" >"$R/$name.log" 2>&1
  echo "== $name: exit $? in $(($(date +%s) - s))s"
  tail -n 4 "$R/$name.log"
  tar czf "$OUT/reports.tgz" -C "$R" .
}

echo "== course at $PWD"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,power.limit --format=csv
step doctor 60 python3 -m tfperf doctor
# The grading sandbox (bubblewrap) on a GPU: TensorFlow inside it, under its memory limit, sees and uses the GPU.
step sandbox_check 90 python3 -m tfperf.autograding.sandbox check
# Chapter 6's exercises alone (setup, exercises 1 and 2), timed with nothing else on the machine: exercise 1's speed
# after c91f6a3 (its inputs copied to the GPU before the clock), exercise 2's mixed-precision speed on this GPU.
python3 tools/probes/notebook_cells.py solutions/06_device_ceilings/device_ceilings.ipynb \
  solutions/06_device_ceilings/exercises_only.ipynb 0-3,33-43
step exercises_06 270 python3 -m tfperf report --size ci solutions/06_device_ceilings/exercises_only.ipynb --out "$R/ex06"
rm -f solutions/06_device_ceilings/exercises_only.ipynb  # the round trip reads every notebook of solutions/
# Then, side by side (one GPU, 16 cores): the nbgrader round trip of chapters 7 and 8 (grading out of the kernel,
# sandboxed kernel and workers on the GPU; the reference and the untouched version only; chapters 1 and 5 passed it on
# an H200), chapter 8 (its results compared on the CPU, 1.2e-3 in the timed calls), chapter 7 whole (served datasets
# made on the CPU): docs/measurements-gpu-nvidia-h200.md.
pids=()
side() {  # side NAME LIMIT COMMAND...: as step, in the background
  local name=$1 limit
  limit=$(limit_for "$2")
  shift 2
  if [ "$limit" -lt 20 ]; then echo "== $name: skipped (no time left)"; return; fi
  echo "== $name (at most ${limit}s, side by side) from $(($(date +%s) - start))s"
  (s=$(date +%s); timeout "$limit" "$@" >"$R/$name.log" 2>&1; echo "== $name: exit $? in $(($(date +%s) - s))s") &
  pids+=($!)
}
side roundtrip 330 env TFPERF_ROUNDTRIP_ASSIGNMENTS=07_beyond_one_device,08_capstone TFPERF_ROUNDTRIP_ONLY=zzz_nothing \
  python3 -m pytest -q -p no:cacheprovider -rA tests/grading
side report_08 200 python3 -m tfperf report --size ci solutions/08_capstone/capstone.ipynb --out "$R/08"
side report_07 330 python3 -m tfperf report --size ci solutions/07_beyond_one_device/beyond_one_device.ipynb --out "$R/07"
wait "${pids[@]}"
for log in roundtrip report_08 report_07; do echo "== $log:"; tail -n 6 "$R/$log.log"; done
mkdir -p "$R/roundtrip-logs"
find test-artifacts/roundtrip -name '*.log' -exec cp --parents {} "$R/roundtrip-logs" \; 2>/dev/null
tar czf "$OUT/reports.tgz" -C "$R" .
echo "== done in $(($(date +%s) - start))s"
