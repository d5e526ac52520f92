# factors for the "why", 1 thread on core 1, fresh processes, interleaved by condition
D=results/reports/replay/cpu-2vcpu-amd-epyc/2026-12-04-host-gather-streaming/factors
P=scripts/probe_host_gather_streaming.py
mkdir -p $D
for k in 1 2 3; do
  for c in seq w928 pf1 pf16; do
    case $c in
      seq) a="--index sequential";; w928) a="--width 928";;
      pf1) a="--prefetch-rows 1 --variants plain-prefetch,stream-prefetch";;
      pf16) a="--prefetch-rows 16 --variants plain-prefetch,stream-prefetch";;
    esac
    echo "$(date -u +%FT%TZ) start $c-p$k load $(cut -d' ' -f1-3 /proc/loadavg)"
    taskset -c 1 .venv/bin/python $P --threads 1 $a --out $D/t1-$c-p$k.json > /dev/null
    echo "$(date -u +%FT%TZ) end $c-p$k rc=$?"
  done
done
