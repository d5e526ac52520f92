# factor: grouped 16 B streaming stores per line (stream-x4) against 16 B interleaved and one 64 B store,
# 1 thread on core 1 (random, sequential) and 2 threads unpinned (random), fresh processes, interleaved
D=results/reports/replay/cpu-2vcpu-amd-epyc/2026-12-04-host-gather-streaming/factors
P=scripts/probe_host_gather_streaming.py
V=stream,stream-prefetch,stream-x4,stream-x4-prefetch,stream-line,stream-line-prefetch
for k in 1 2 3; do
  for c in x4 x4-seq x4-t2; do
    echo "$(date -u +%FT%TZ) start $c-p$k load $(cut -d' ' -f1-3 /proc/loadavg)"
    case $c in
      x4) taskset -c 1 .venv/bin/python $P --threads 1 --variants $V --out $D/t1-$c-p$k.json > /dev/null;;
      x4-seq) taskset -c 1 .venv/bin/python $P --threads 1 --variants $V --index sequential --out $D/t1-$c-p$k.json > /dev/null;;
      x4-t2) .venv/bin/python $P --threads 2 --variants $V --out $D/t2-x4-p$k.json > /dev/null;;
    esac
    echo "$(date -u +%FT%TZ) end $c-p$k rc=$?"
  done
done
