#!/usr/bin/env bash
# Device call: the asv suites with --python=same for the commit carried in .gitbundle.
#   BUDGET_S=540 bash scripts/device/asv.sh REGEX...
# One asv invocation per regex, in the order given (asv saves results when an invocation ends); an
# invocation that would start past the time budget is skipped and named, one that overruns is stopped.
source "$(dirname "$0")/common.sh"
# asv reads commit dates from a repository with a `main` branch: a clone of the carried bundle.
rm -rf /tmp/asvrepo && git clone -q .gitbundle /tmp/asvrepo && git -C /tmp/asvrepo checkout -q -B main || exit 1
SHA=$(git -C /tmp/asvrepo rev-parse main)
sed 's|"repo": "\."|"repo": "/tmp/asvrepo"|' asv.conf.json > asv.device.conf.json
M=$(python3 -m rlperf machine --print-name)
python3 -m rlperf machine --write --name "$M"
export ASV_PYTHONPATH="$PYTHONPATH" NUMBA_CACHE_DIR=/tmp/numba-cache NUMBA_NUM_THREADS=$(nproc)
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
# Compile the env kernels once, so asv processes load them from the cache instead of racing to compile.
python3 -c "from rlperf.envs import harness, registry; [harness.prepare(t) for t in registry.TASKS]"
budget=${BUDGET_S:-540}
for b in "$@"; do
  left=$((budget - SECONDS))
  if [ "$left" -lt 30 ]; then echo "asv: not run for lack of time: $b" | tee -a "$WORK/asv.log"; continue; fi
  timeout "$left" python3 -m asv --config asv.device.conf.json run --python=same --set-commit-hash "$SHA" --machine "$M" \
    --launch-method spawn --record-samples --show-stderr --bench "$b" >> "$WORK/asv.log" 2>&1 \
    || echo "asv: $b exited $? after $SECONDS s" | tee -a "$WORK/asv.log"
  echo "asv: $b done at $SECONDS s"
done
tar czf "$OUT/asv.tgz" -C . "results/asv/$M" results/asv/benchmarks.json -C "$WORK" asv.log machine.txt
