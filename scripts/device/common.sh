# Sourced by the device scripts: install the carried wheels (asv, hydra) and make rlperf importable.
# The GPU image has torch, numba, numpy, matplotlib, pytest, cupy, nvidia-ml-py (pynvml) but no network and no
# asv/hydra.
set -uo pipefail
: "${OUT:?OUT must name the folder whose files come back}"
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
rm -rf /tmp/site
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
  .wheels/*.whl || exit 1
export PYTHONPATH=$PWD/src:/tmp/site PATH=/tmp/site/bin:$PATH PYTHONUNBUFFERED=1
WORK=$(mktemp -d)
python3 - <<'PY' | tee "$WORK/machine.txt"
import json
from rlperf.measure.machine import machine_identity
print(json.dumps(machine_identity(), indent=2))
PY
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
  --format=csv >> "$WORK/machine.txt" 2>&1 || true
# The call's clock and log: `left` is the seconds left of LIMIT_S (default 560, under the 600 s a call may run);
# `log` prints a line and keeps it in $OUT/summary.txt, which comes back.
START=$SECONDS
left() { echo $((${LIMIT_S:-560} - (SECONDS - START))); }
log() { echo "$*" | tee -a "$OUT/summary.txt"; }
replay() {  # replay NAME PLACEMENTS EXPONENTS [more flags]: one fresh `rlperf replay` process into $R/NAME, within
  # the time left; PLACEMENTS "all": every placement. The caller sets R.
  local name=$1 placements=$2 exps=$3 which=()
  shift 3
  [ "$placements" = all ] || which=(--placements "$placements")
  [ "$(left)" -lt 45 ] && { log "$name not started: $(left) s left"; return; }
  timeout $(($(left) - 10)) python3 -m rlperf replay --task g1_motion_tracking --sim motrix "${which[@]}" \
    --capacity-exponents "$exps" --gpu-counts 1 --no-plots --out-json "$R/$name/results.json" "$@" > "$R/$name.log" 2>&1
  log "$name ($placements at 2^$exps) rc=$? after $((SECONDS - START)) s"
}
interleaved() {  # interleaved NAME FIRST LAST PROBE-ARGS...: probe_interleaved.py in fresh processes FIRST..LAST
  # into $R, then their summary into $R/NAME.md and $OUT/summary.txt. The caller sets R.
  local name=$1 first=$2 last=$3
  shift 3
  for k in $(seq "$first" "$last"); do
    [ "$(left)" -lt 60 ] && { log "$name process $k not started: $(left) s left"; break; }
    timeout $(($(left) - 10)) python3 scripts/device/probe_interleaved.py "$@" --out "$R/$name-$k.json" \
      > "$R/$name-$k.md" 2> "$R/$name-$k.log"
    log "interleaved $name process $k: rc=$? after $((SECONDS - START)) s"
  done
  ls "$R/$name"-*.json > /dev/null 2>&1 || return
  python3 scripts/device/probe_interleaved.py --summarize "$R/$name"-*.json --out-md "$R/$name.md"
  cat "$R/$name.md" >> "$OUT/summary.txt"
}
zero_copy_pass_and_processes() {  # the pass probe of uva-fused-bf16, then 5 fresh `replay` processes of the four
  # zero-copy placements at 2^20 (the order rotated by one each), and their run-to-run noise, into $R and
  # $OUT/summary.txt. The caller sets R.
  timeout 60 python3 scripts/device/probe_pass.py --placement uva-fused-bf16 --out "$R/pass-uva-fused-bf16.json" \
    > "$R/pass-uva-fused-bf16.md" 2> "$R/pass-uva-fused-bf16.log"
  log "pass probe uva-fused-bf16: rc=$? after $((SECONDS - START)) s"
  cat "$R/pass-uva-fused-bf16.md" >> "$OUT/summary.txt"
  local zero=(uva-fused-bf16 uva-bf16 uva-fused uva) k order
  for k in 0 1 2 3 4; do
    order=$(printf '%s\n' "${zero[@]:k % 4}" "${zero[@]:0:k % 4}" | paste -sd,)
    replay "uva$((k + 1))" "$order" 20 --no-ceilings
  done
  python3 scripts/run_noise.py "$R"/uva?/results.json --out-md "$R/noise-uva.md" >> "$R/noise.log" 2>&1
  cat "$R/noise-uva.md" >> "$OUT/summary.txt"
}
