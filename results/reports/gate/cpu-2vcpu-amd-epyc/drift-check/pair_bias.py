"""A/A through gate.paired: the same checkout on both sides, one fresh pair of workers per run. The
median per-block ratio of each run is that process pair's own bias (the code is identical).

    OMP_NUM_THREADS=1 python pair_bias.py POINT SECONDS RUNS [CPU]     # CPU: pin driver and workers there
"""
import json
import os
import statistics
import sys

from rlperf.gate.paired import PairedSpec, bench_dir_of, sample_point

point, seconds, runs = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
if len(sys.argv) > 4:
    os.sched_setaffinity(0, {int(sys.argv[4])})  # the workers inherit it
root = os.getcwd()
side = (bench_dir_of(root), dict(os.environ, ASV_PYTHONPATH=""), root)
spec = PairedSpec(seconds=seconds)
for _ in range(runs):
    got = sample_point(point, {"base": side, "head": side}, spec, log=open(os.devnull, "w"))
    if got.error or got.skipped:
        print(json.dumps({"error": got.error, "skipped": got.skipped}))
        continue
    ratios = [h / b for b, h in got.blocks(spec.block)]
    print(json.dumps({"point": point, "cpu": sys.argv[4] if len(sys.argv) > 4 else "any", "pairs": len(got.pairs),
                      "number": got.number, "blocks": len(ratios), "median_block_ratio": statistics.median(ratios),
                      "cv_block_ratio": statistics.pstdev(ratios) / statistics.mean(ratios)}))
