#!/usr/bin/env bash
# Device call: the GPU history (`rlperf backfill --selection gpu-history`) or a gate pair, run from a clone of
# a carried git bundle (the device copies the session's checkout, whose .git need not hold these commits).
#   rm -rf /tmp/repo; git clone -q -b BRANCH BUNDLE /tmp/repo && cp -r .wheels /tmp/repo/ && \
#     STEP=backfill MACHINE=M COMMITS=a,b,... [BENCH=regex] MAX_MIN=7 LIMIT=530 bash /tmp/repo/scripts/device/gpu_history.sh
#     STEP=gate MACHINE=M PAIRS="base:head:name ..." BENCH=regex LIMIT=... bash /tmp/repo/scripts/device/gpu_history.sh
#   NAME=x names the packed folder (default STEP), so two steps of one call come back as two files. The e2e
#   points need mujoco-core among the wheels and the G1 files in .e2e_assets/ (see scripts/device/steps.sh).
# backfill: results go to a scratch folder that first receives MACHINE's committed fingerprints, so the host
# guard compares this host with the one the history was measured on; on a refusal (another host) it runs
# again with --allow-host-change, the new host drawing its own series. Everything (results, the JSON
# lines, the output, machine.txt) is packed into $OUT/gpuhist-NAME.tgz, also when LIMIT cut the step.
source "$(dirname "$0")/common.sh"
export NUMBA_CACHE_DIR=/tmp/numba-cache OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
# asv's benchmark.py drops PYTHONPATH (where common.sh puts rlperf and asv_runner) unless ASV_PYTHONPATH is set;
# the commit's overlay goes in front of it (asvtools.run_commit), so the measured code is the commit's.
export ASV_PYTHONPATH=/tmp/site
: "${STEP:?}" "${MACHINE:?}" "${LIMIT:?}"
NAME=${NAME:-$STEP}
DEST=/tmp/gpuhist-$NAME
# the G1 asset package where asv's benchmark processes import from (ASV_PYTHONPATH below)
[ -d .e2e_assets ] && cp -r .e2e_assets/. /tmp/site/
rm -rf "$DEST" && mkdir -p "$DEST"
cp "$WORK/machine.txt" "$DEST/"
date -u +%Y-%m-%dT%H:%M:%SZ > "$DEST/started_utc"
git log -1 --format='%H %s' > "$DEST/suite_commit"

backfill() {
  local res=$DEST/asv
  mkdir -p "$res/$MACHINE/fingerprints"
  cp results/asv/"$MACHINE"/fingerprints/*.fingerprint "$res/$MACHINE/fingerprints/" 2>/dev/null || true
  local args=(--selection gpu-history --machine "$MACHINE" --results-dir "$res" --log "$DEST/backfill.jsonl"
              --commits "${COMMITS:?}" --branch HEAD --order changes-first --paths src/rlperf/replay --max-minutes "${MAX_MIN:?}")
  [ -n "${BENCH:-}" ] && args+=(--bench "$BENCH")
  echo "+ python3 -m rlperf backfill ${args[*]}"
  timeout -s INT "$LIMIT" python3 -m rlperf backfill "${args[@]}" 2>&1 | tee "$DEST/backfill.out"
  local rc=${PIPESTATUS[0]}
  if [ "$rc" = 5 ] && grep -q "is not the one the history" "$DEST/backfill.out"; then
    echo "+ again with --allow-host-change (another host: its own series)"
    timeout -s INT "$LIMIT" python3 -m rlperf backfill "${args[@]}" --allow-host-change 2>&1 | tee -a "$DEST/backfill.out"
    rc=${PIPESTATUS[0]}
  fi
  echo "backfill exit $rc" | tee -a "$DEST/backfill.out"
}

gate() {
  local started=$SECONDS pair base head name
  for pair in ${PAIRS:?}; do
    IFS=: read -r base head name <<< "$pair"
    local left=$((LIMIT - (SECONDS - started)))
    local args=(--base "$base" --head "$head" --run --profile gpu --machine "$MACHINE" --bench "${BENCH:?}"
                --out-md "$DEST/$name.md" --out-json "$DEST/$name.json" ${GATE_FLAGS:-})
    echo "+ $(date -u +%H:%M:%SZ) python3 -m rlperf gate ${args[*]}" | tee -a "$DEST/gate.out"
    timeout -s INT "$left" python3 -m rlperf gate "${args[@]}" 2>&1 | tee -a "$DEST/gate.out"
    echo "gate $name exit ${PIPESTATUS[0]} at $(date -u +%H:%M:%SZ)" | tee -a "$DEST/gate.out"
  done
}

"$STEP"
date -u +%Y-%m-%dT%H:%M:%SZ > "$DEST/finished_utc"
tar czf "$OUT/gpuhist-$NAME.tgz" -C "$(dirname "$DEST")" "$(basename "$DEST")"
ls -la "$OUT"
