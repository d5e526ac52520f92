#!/usr/bin/env bash
# Creates (or refreshes) the project environment without ever pulling a multi-GB CUDA torch on a CPU box.
#
#   VENV=.venv scripts/bootstrap.sh
#
# - The venv sees the packages of the python3 that made it (system site packages, plus that python's own
#   site-packages when python3 is itself a venv), so a GPU runner keeps the CUDA torch it already has.
# - Where no torch is importable, a CPU build is installed first: a local +cpu wheel from PIP_FIND_LINKS
#   if one lies there, else the CPU wheel index of pytorch.org.
set -euo pipefail
VENV=${VENV:-.venv}
PYTHON=${PYTHON:-python3}

if [ ! -x "$VENV/bin/python" ]; then
  "$PYTHON" -m venv --system-site-packages "$VENV"
  outer=$("$PYTHON" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  inner=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  [ "$outer" != "$inner" ] && echo "$outer" > "$inner/_rlperf_outer_site.pth"
fi
PY="$VENV/bin/python"

if ! "$PY" -c 'import torch' 2>/dev/null; then
  wheel=""
  for d in ${PIP_FIND_LINKS:-}; do
    pyv=$("$PY" -c 'import sys; print(f"cp{sys.version_info[0]}{sys.version_info[1]}")')
    cand=$(ls "$d"/torch-*+cpu-"$pyv"-*.whl 2>/dev/null | sort -V | tail -n 1 || true)
    [ -n "$cand" ] && wheel=$cand
  done
  if [ -n "$wheel" ]; then
    echo "bootstrap: installing local CPU torch $wheel"
    "$PY" -m pip install -q "$wheel"
  else
    echo "bootstrap: installing CPU torch from download.pytorch.org/whl/cpu"
    "$PY" -m pip install -q torch --index-url https://download.pytorch.org/whl/cpu \
      --extra-index-url https://pypi.org/simple
  fi
fi

"$PY" -m pip install -q -e '.[test,e2e]'
"$PY" - <<'PY'
import torch, numba, numpy
try:
    import mujoco
    physics = f"mujoco {mujoco.__version__}"
except ImportError:
    physics = "mujoco missing (the collector, the walk learner and their tests and asv points skip)"
print(f"bootstrap: torch {torch.__version__} (cuda={torch.cuda.is_available()}), "
      f"numba {numba.__version__}, numpy {numpy.__version__}, {physics}")
PY
