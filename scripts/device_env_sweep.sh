#!/usr/bin/env bash
# Full env-kernel sweep on a 16-vCPU host: all three tasks, sac_default (probe: its only profile),
# envs 512..32768, Numba threads 1,2,4,8,16, iters 80, warmup 8, into $OUT/env/<task>/.
#
# Needs: python3 with numpy, numba, torch, matplotlib, tqdm; PYTHONPATH containing the repository's src/.
# Usage: OUT=/some/dir scripts/device_env_sweep.sh      (optional: PYTHON=python3.11, THREADS=1,2,4)
set -euo pipefail

: "${OUT:?set OUT to the output folder}"
PYTHON="${PYTHON:-python3}"
THREADS="${THREADS:-1,2,4,8,16}"
ENVS="512,1024,2048,4096,8192,16384,32768"

# Numba's pool ceiling must cover the sweep maximum (read at import); NumPy's BLAS stays single-threaded
# so it never competes with the Numba pool; the Numba cache goes to a private folder (no cross-process races).
export NUMBA_NUM_THREADS="${NUMBA_NUM_THREADS:-$(nproc)}"
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
export NUMBA_CACHE_DIR="${NUMBA_CACHE_DIR:-$OUT/env/.numba_cache}"
export RLPERF_MACHINE="${RLPERF_MACHINE:-}"
[ -n "$RLPERF_MACHINE" ] || unset RLPERF_MACHINE
mkdir -p "$OUT/env"

"$PYTHON" - <<'PY' > "$OUT/env/environment.txt" 2>&1 || true
import os, numba, numpy, platform
print("python", platform.python_version(), "numpy", numpy.__version__, "numba", numba.__version__)
print("cpus", os.cpu_count(), "NUMBA_NUM_THREADS", numba.config.NUMBA_NUM_THREADS)
try:
    import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)
except Exception as exc:
    print("torch: not importable:", exc)
PY

status=0
for task in g1_walk_flat g1_motion_tracking probe; do
  profiles=()
  [ "$task" = probe ] || profiles=(--profiles sac_default)
  echo "== $task ==" >&2
  # One process per task: the kernel compiles (or loads from cache) once, before anything is timed.
  rc=0
  "$PYTHON" -m rlperf env --task "$task" "${profiles[@]}" --num-envs "$ENVS" --threads "$THREADS" \
      --iters 80 --warmup 8 --seed 0 --out-json "$OUT/env/$task/results.json" \
      > "$OUT/env/$task.log" 2>&1 || rc=$?
  if [ "$rc" -ne 0 ]; then
    echo "$task: rlperf env exited $rc (1 = parity failure, 2 = bad input / task unavailable); see $OUT/env/$task.log" >&2
    status=1
  fi
  tail -n 25 "$OUT/env/$task.log" >&2 || true
done
exit "$status"
