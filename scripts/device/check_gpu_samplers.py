"""Quick look at the GPU samplers and the zero-copy path on the GPU host (prints medians and minima)."""

from rlperf.replay.cases import ReplayCase, Resources
from rlperf.replay.run import run_case

res = Resources.probe()
for placement in ("gpu", "gpu-padded", "gpu-fused", "gpu-fused-padded", "uva", "gpu-bf16", "gpu-fused-bf16",
                  "uva-bf16", "gpu-compact"):
    for cap in (2**20, 2**24, 2**26):
        out = run_case(ReplayCase("g1_motion_tracking", "motrix", placement, cap), res, warmup=5, repeat=30,
                       threads=16, seed=1)
        if not out.result:
            print(placement, cap, out.skipped)
            continue
        for metric, t in out.result["timings"].items():
            print(f"{placement:18s} {cap:>10,} {metric:26s} median {t['median_ms']:.4f} min {t['min_ms']:.4f} ms")
