"""Is a fused gather short of the device copy by a rate or by a fixed cost per launch? Time it over batch sizes.

Why (issue 23): gpu-fused (fp32) reads 0.0661 ms against its 0.065 ms target and moves bytes at 0.90 of the device
copy's rate; gpu-fused-bf16 moves them at 0.86. Fitted through those two points alone, `ms = bytes / rate + fixed`
gives a rate of about 0.94 of the copy's and a fixed 2.9 us a launch, which would say the gap is the launch's ramp and
tail (one row a warp, the last rows finishing alone), not the bytes. Two points fit any line, so this probe times each
gather at several batch sizes beside a device copy of the same bytes (torch `copy_` from a rotating pool, as
`measure.ceilings` times its ceiling), fits each method's line and reports both parts.

Timing is the gathers' (`replay.placements.base.GPU_INNER` launches a CUDA-event window behind a GPU hold: device
time only), every (method, size) in every round in a rotating order. The gather at each size draws that many rows from
the placement's own table (one table a placement, built for the largest size and verified at it). One record per
process (JSON-ready); `summarize` tabulates records.
"""

from __future__ import annotations

import statistics
import time

PLACEMENTS = ("gpu-fused", "gpu-fused-bf16")  # the whole-row fused gathers (one vector kernel, no plan)
SIZES = (4096, 8192, 16384, 32768, 65536, 131072)  # rows a batch; 32,768 is the learner's


def _checked(placements, sizes) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """The placements and sizes, or a UsageError naming the problem and the valid choices."""
    from rlperf.errors import UsageError, choice_error

    for name in placements:
        if name not in PLACEMENTS:
            raise choice_error("placement", name, PLACEMENTS)
    sizes = tuple(sizes)
    if len(sizes) < 3 or any(s < 32 for s in sizes) or list(sizes) != sorted(set(sizes)):
        raise UsageError(f"sizes must be at least 3 distinct increasing batch sizes of >= 32 rows (a line needs 3 "
                         f"points to be checked), got {sizes}")
    return tuple(placements), sizes


def _pool(nbytes: int, device, torch):
    """A device pool that holds enough slices of `nbytes` (and of anything smaller) that none is hot in L2 when it
    is read again (`measure.ceilings.pool_slices`): one pool serves every batch size of a row width."""
    from rlperf.measure.ceilings import pool_slices

    n = nbytes // 4
    return torch.ones(pool_slices(4 * n) * n, device=device)


def _copy(nbytes: int, pool, torch):
    """A call copying `nbytes` from the next slice of the rotating `pool` into one buffer."""
    from rlperf.measure.ceilings import rotating_copy

    return rotating_copy(torch.empty(nbytes // 4, device=pool.device), pool)


def probe(placements=PLACEMENTS, sizes=SIZES, *, exponent: int = 20, rounds: int = 5, repeat: int = 5) -> dict:
    """Build each placement for the largest size, then `rounds` rounds timing every gather and every copy of the
    same bytes at every size (rotating order). Needs CUDA."""
    import torch

    from rlperf.measure.machine import machine_name
    from rlperf.measure.timing import time_cuda
    from rlperf.replay import kernel_probe
    from rlperf.replay.placements.base import GPU_INNER

    placements, sizes = _checked(placements, sizes)
    if not torch.cuda.is_available():
        from rlperf.errors import UsageError

        raise UsageError("the scaling probe times GPU gathers: no CUDA device is visible")
    t0 = time.perf_counter()
    built = {name: kernel_probe.build(name, exponent, sample_rows=sizes[-1]) for name in placements}
    row_bytes = {name: pl.layout.batch_row_bytes for name, pl in built.items()}
    calls = {}  # (method, rows) -> (placement or None for a copy, row bytes, the call); each on its placement's stream
    for name, pl in built.items():
        launch = kernel_probe.launcher(pl, kernel_probe.Variant(name))
        rb = row_bytes[name]
        pool = _pool(sizes[-1] * rb, pl.device, torch)
        for s in sizes:
            calls[(name, s)] = (pl, rb, launch, pl.stream)
            calls[(f"copy of {rb:,} B rows", s)] = (None, rb, _copy(s * rb, pool, torch), pl.stream)
    torch.cuda.synchronize()  # the pools' fills ran on the default stream; the copies run on the placements'
    setup_s = time.perf_counter() - t0
    keys = list(calls)
    timings = []
    for rnd in range(rounds):
        for method, s in keys[rnd % len(keys):] + keys[: rnd % len(keys)]:
            pl, rb, call, stream = calls[(method, s)]
            if pl is not None:
                pl.sample_rows = s  # the launch draws and copies `s` rows into the first `s` of its buffer
            ms = time_cuda(call, warmup=2, repeat=repeat, stream=stream, inner=GPU_INNER, run_ahead=True)
            timings.append({"round": rnd, "method": method, "rows": s, "bytes_moved": 2 * s * rb,
                            "ms": statistics.median(ms)})
    return {"machine": machine_name(), "gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
            "exponent": exponent, "placements": list(placements), "sizes": list(sizes), "row_bytes": row_bytes,
            "rounds": rounds, "repeat": repeat, "inner": GPU_INNER, "setup_s": setup_s, "timings": timings}


def fit(points: list[tuple[int, float]]) -> dict:
    """Least squares `ms = bytes / rate + fixed` over (bytes moved, ms): rate in TB/s, fixed in us, and the
    largest relative residual (a bad line says the model does not hold)."""
    xs, ys = [float(b) for b, _ in points], [ms for _, ms in points]
    slope, intercept = statistics.linear_regression(xs, ys)
    worst = max(abs(y - (slope * x + intercept)) / y for x, y in points)
    return {"rate_TBps": 1 / slope / 1e9, "fixed_us": intercept * 1e3, "max_residual": worst}


def summarize(records: list[dict]) -> str:
    """Markdown per process: each method's median ms and TB/s per size, then its fitted rate and fixed cost."""
    lines = []
    for k, rec in enumerate(records, 1):
        per: dict[str, dict[int, list]] = {}
        for t in rec["timings"]:
            per.setdefault(t["method"], {}).setdefault(t["rows"], []).append((t["bytes_moved"], t["ms"]))
        sizes = rec["sizes"]
        lines += [f"### Process {k}: {rec['machine']} ({rec['gpu']}), table 2^{rec['exponent']} rows",
                  "",
                  f"Median over {rec['rounds']} rotating rounds of each window's mean ({rec['inner']} launches a "
                  f"window behind a GPU hold, median of {rec['repeat']} windows); TB/s counts bytes read + written.",
                  "",
                  "| method | " + " | ".join(f"{s:,} rows" for s in sizes) + " | fitted rate, TB/s | fixed, us | "
                  "worst residual |",
                  "|---|" + "---:|" * (len(sizes) + 3)]
        for method, by_size in per.items():
            med = {s: (v[0][0], statistics.median(ms for _, ms in v)) for s, v in by_size.items()}
            f = fit(list(med.values()))
            cells = [f"{ms:.4f} ms, {b / ms / 1e9:.2f}" for b, ms in (med[s] for s in sizes)]
            lines.append(f"| {method} | " + " | ".join(cells) + f" | {f['rate_TBps']:.3f} | {f['fixed_us']:.2f} | "
                         f"{100 * f['max_residual']:.1f} % |")
        lines.append("")
    return "\n".join(lines)


__all__ = ["PLACEMENTS", "SIZES", "fit", "probe", "summarize"]
