#!/usr/bin/env bash
# Create (or reuse) the course's virtual environment.
#
#   tools/ensure-venv.sh VENV_DIR cpu|gpu
#
# The venv is rebuilt only when the lock files (or the chosen TensorFlow variant)
# change: their SHA-256 is stored in VENV_DIR/.lock-sha256. The course's own
# package is then installed in editable mode, which takes a couple of seconds.
set -euo pipefail
venv=${1:?usage: ensure-venv.sh VENV_DIR cpu|gpu}
variant=${2:?usage: ensure-venv.sh VENV_DIR cpu|gpu}
here=$(cd "$(dirname "$0")/.." && pwd)
python=${PYTHON:-python3}
locks=("$here/requirements/lock.txt" "$here/requirements/tensorflow-$variant.txt" "$here/requirements/dev.txt")

want=$( { cat "${locks[@]}"; echo "variant=$variant"; "$python" --version; } | sha256sum | cut -d' ' -f1)
have=$(cat "$venv/.lock-sha256" 2>/dev/null || true)

if [ "$want" != "$have" ]; then
  echo "== Setting up $venv (TensorFlow: $variant). This takes a minute or two the first time."
  rm -rf "$venv"
  "$python" -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet -r "${locks[0]}" -r "${locks[1]}" -r "${locks[2]}"
  echo "$want" > "$venv/.lock-sha256"
else
  echo "== Reusing $venv (lock unchanged)."
fi

# The course package, editable, pointing at this checkout.
"$venv/bin/python" -m pip install --quiet --no-deps --no-build-isolation -e "$here"
# Its modules compiled once (pip compiles the installed packages', not an editable checkout's): where
# PYTHONDONTWRITEBYTECODE is set, as on this project's test machines, no process writes them, so every process that
# imports the course (kernels, nbgrader's commands, the grading's workers) compiled them again.
"$venv/bin/python" -m compileall -q "$here/src" >/dev/null

# JupyterLab defaults for the course: no news or update pop-ups over the notebooks.
mkdir -p "$venv/share/jupyter/lab/settings"
cp "$here/tools/jupyterlab/overrides.json" "$venv/share/jupyter/lab/settings/overrides.json"
