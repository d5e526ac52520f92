#!/usr/bin/env bash
# Device call: named measurement steps, each under its own time limit, packed after every step so that a
# step that overruns or breaks still returns what the earlier ones measured.
#   CALL=call1 bash scripts/device/steps.sh STEP:SECONDS ...
# Steps: gpu_tests, env, noise, e2e_<task>_<physics>[_<what>], asv_history, gate_env, gate_power_gpu,
# gate_power_cpu (see run_step below). Needs the carried
# .wheels (asv, hydra, mujoco-core) and .e2e_assets (the G1 files the feet-only scene loads).
source "$(dirname "$0")/common.sh"
export PYTHONPATH=$PYTHONPATH:$PWD/.e2e_assets
export NUMBA_CACHE_DIR=/tmp/numba-cache NUMBA_NUM_THREADS=$(nproc)
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
CALL=${CALL:-call}
E2E_PLACEMENTS=${E2E_PLACEMENTS:-host,uva,gpu-fused,gpu-cache}

e2e() {  # e2e NAME TASK PHYSICS [extra rlperf e2e flags...]
  # pinned to the settings the committed 2026-12-01 folders were measured with (synchronous, no learner
  # graphs), not rlperf e2e's defaults (async, graphs where CUDA is); a step's own flags come last and win
  local name=$1 task=$2 physics=$3; shift 3
  python3 -m rlperf e2e --task "$task" --sim mujoco --physics "$physics" --placements "$E2E_PLACEMENTS" \
    --prefetch none,one_tick --iterations "${E2E_ITERS:-10}" --warmup-iterations "${E2E_WARMUP:-3}" \
    --schedule synchronous --learner-graphs off --out-json "$WORK/$name/results.json" "$@"
}

run_step() {  # run_step NAME
  case "$1" in
    gpu_tests) python3 -m pytest -q -p no:cacheprovider -m gpu -rfE tests ;;
    env)
      for task in probe g1_motion_tracking g1_walk_flat; do
        prof=(); [ "$task" = probe ] || prof=(--profiles sac_default)
        python3 -m rlperf env --task "$task" "${prof[@]}" --num-envs 8192,32768 --threads 1,16 \
          --iters "${ENV_ITERS:-40}" --warmup 5 --out-json "$WORK/env/$task/results.json" | tail -n 30
      done ;;
    noise)
      python3 -m rlperf noise --task g1_motion_tracking --num-envs 32768 --threads 1,16 \
        --out-json "$WORK/noise/g1_motion_tracking/results.json" | tail -n 30
      for task in probe g1_motion_tracking; do
        python3 -m rlperf noise-overhead --task "$task" --num-envs 32768 --threads 16 --rounds 15
      done ;;
    e2e_mt_recorded) e2e "$1" g1_motion_tracking recorded ;;
    e2e_mt_mujoco) e2e "$1" g1_motion_tracking mujoco ;;
    e2e_walk_recorded) e2e "$1" g1_walk_flat recorded ;;
    e2e_walk_mujoco) e2e "$1" g1_walk_flat mujoco ;;
    e2e_mt_async) e2e "$1" g1_motion_tracking recorded --schedule async --ab-steps 0 ;;
    e2e_mt_scale) e2e "$1" g1_motion_tracking recorded --num-envs 4096,8192 --ab-steps 4 ;;
    collector)
      for task in g1_motion_tracking g1_walk_flat; do
        python3 -m rlperf collector --task "$task" --num-envs 2048 --physics-threads 8,16 \
          --steps 6 --out-json "$WORK/collector/$task.json" | tail -n 40
      done ;;
    e2e_mt_eager) E2E_PLACEMENTS=gpu-fused e2e "$1" g1_motion_tracking recorded --prefetch one_tick --ab-steps 0 \
      algo.use_compile=false ;;
    e2e_mt_graphs) E2E_PLACEMENTS=gpu-fused e2e "$1" g1_motion_tracking recorded --prefetch one_tick --ab-steps 0 \
      --learner-graphs on ;;
    asv_history)  # ASV_SHAS oldest first, ASV_BENCH a regex; the carried .gitbundle holds the commits
      rm -rf /tmp/asvrepo && git clone -q .gitbundle /tmp/asvrepo && git -C /tmp/asvrepo checkout -q -B main origin/main || return 1
      M=$(python3 -m rlperf machine --print-name)
      ASV_PYTHONPATH=/tmp/site python3 scripts/device/asv_history.py --repo /tmp/asvrepo --machine "$M" \
        --bench "$ASV_BENCH" $ASV_SHAS
      rc=$?; tar czf "$OUT/asv.tgz" results/asv/"$M" results/asv/benchmarks.json; return $rc ;;
    gate_env)  # GATE_BASE GATE_HEAD (refs of the carried .gitbundle), ASV_BENCH: the gate's interleaved passes;
      # head's last pass (and its fingerprint) joins the host's history, base's stored record is left alone
      rm -rf /tmp/asvrepo /tmp/gate-results && git clone -q .gitbundle /tmp/asvrepo \
        && git -C /tmp/asvrepo checkout -q -B main origin/main || return 1
      M=$(python3 -m rlperf machine --print-name)
      # --paired 0: passes only, as recorded before gate.toml's profiles (whose default pairs points)
      python3 -m rlperf gate --repo /tmp/asvrepo --base "$GATE_BASE" --head "$GATE_HEAD" --run --paired 0 \
        --passes "${GATE_PASSES:-3}" --bench "$ASV_BENCH" --machine "$M" --results-dir /tmp/gate-results \
        --accept-changed 'bench_env.*' --keep-passes "$WORK/gate_env/passes" \
        --out-json "$WORK/gate_env/verdict.json" --out-md "$WORK/gate_env/verdict.md"
      rc=$?; head8=$(git -C /tmp/asvrepo rev-parse "$GATE_HEAD" | cut -c1-8)
      mkdir -p results/asv/"$M"/fingerprints
      cp /tmp/gate-results/"$M"/"$head8"-*.json results/asv/"$M"/ \
        && cp /tmp/gate-results/"$M"/fingerprints/"$head8".fingerprint results/asv/"$M"/fingerprints/
      tar czf "$OUT/asv.tgz" results/asv/"$M" -C /tmp gate-results; return $rc ;;
    gate_power_gpu|gate_power_cpu)  # `rlperf gate-power study`'s paired block design on this host (docs/gate.md)
      rm -rf /tmp/gprepo && git clone -q .gitbundle /tmp/gprepo && git -C /tmp/gprepo checkout -q -B main origin/main \
        || return 1
      if [ "$1" = gate_power_gpu ]; then target=(--target gpu-fused --steps "${GP_STEPS:-3}")
        [ -z "${GP_BENCH:-}" ] || target+=(--bench "$GP_BENCH")
      else target=(--target walk --steps "${GP_STEPS:-5}" --bench "${GP_BENCH:-EnvFused\.time_fused\('(g1_walk_flat|probe)', 8192, (1|16)\)}")
      fi
      python3 -m rlperf gate-power study --repo /tmp/gprepo --base main "${target[@]}" --sizes 0.10 --blocks 1 \
        --trials-per-block "${GP_TRIALS:-60}" --paired-seconds "${GP_SECONDS:-0.8}" \
        --restarts-per-trial "${GP_RESTARTS:-1}" --factors 1.03,1.05,1.10,1.20 \
        --work-dir "$WORK/$1/work" --out-json "$WORK/$1/power.json" --out-md "$WORK/$1/power.md" ;;
    *) echo "unknown step $1"; return 2 ;;
  esac
}

export -f run_step e2e
export WORK CALL E2E_PLACEMENTS OUT
for item in "$@"; do
  name=${item%%:*} limit=${item#*:}
  mkdir -p "$WORK/$name"
  start=$SECONDS
  echo "== $name (limit ${limit}s) at ${SECONDS}s =="
  timeout -k 10 "$limit" bash -c 'run_step "$0"' "$name" > "$WORK/$name/log.txt" 2>&1; rc=$?
  echo "$name: exit $rc after $((SECONDS - start))s" | tee -a "$WORK/steps.txt"
  tail -n 25 "$WORK/$name/log.txt"
  tar czf "$OUT/$CALL.tgz" -C "$WORK" . 2>/dev/null
done
