# confirmation: the main design again, all six variants (stream-line found in a factor run), at this commit
D=results/reports/replay/cpu-2vcpu-amd-epyc/2026-12-04-host-gather-streaming/confirm
P=scripts/probe_host_gather_streaming.py
mkdir -p $D
for k in 1 2 3 4 5; do
  if [ $((k % 2)) = 1 ]; then order="1 2"; else order="2 1"; fi
  for t in $order; do
    echo "$(date -u +%FT%TZ) start t$t-p$k load $(cut -d' ' -f1-3 /proc/loadavg)"
    if [ $t = 1 ]; then taskset -c 1 .venv/bin/python $P --threads 1 --out $D/t1-p$k.json > /dev/null
    else .venv/bin/python $P --threads 2 --out $D/t2-p$k.json > /dev/null; fi
    echo "$(date -u +%FT%TZ) end t$t-p$k rc=$?"
  done
done
