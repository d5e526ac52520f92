# factor: the streaming store's width (16 B vs one 64 B store per line), 1 thread on core 1 (random and
# sequential index) and 2 threads unpinned (random), fresh processes, interleaved by condition
D=results/reports/replay/cpu-2vcpu-amd-epyc/2026-12-04-host-gather-streaming/factors
P=scripts/probe_host_gather_streaming.py
V=stream,stream-prefetch,stream-line,stream-line-prefetch
for k in 1 2 3; do
  for c in line line-seq line-t2; do
    echo "$(date -u +%FT%TZ) start $c-p$k load $(cut -d' ' -f1-3 /proc/loadavg)"
    case $c in
      line) taskset -c 1 .venv/bin/python $P --threads 1 --variants $V --out $D/t1-$c-p$k.json > /dev/null;;
      line-seq) taskset -c 1 .venv/bin/python $P --threads 1 --variants $V --index sequential --out $D/t1-$c-p$k.json > /dev/null;;
      line-t2) .venv/bin/python $P --threads 2 --variants plain,plain-prefetch,$V --out $D/t2-line-p$k.json > /dev/null;;
    esac
    echo "$(date -u +%FT%TZ) end $c-p$k rc=$?"
  done
done
