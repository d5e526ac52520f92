"""Where a replay placement's synchronised pass spends its time, timed interleaved with its parts in one process.

Why (issue 23): `rlperf replay` reads two passes above the sum of their parts, and blocks timed one after another
cannot say why (this host's speed drifts inside a process; docs/replay-host-vs-reference.md):

- `host`'s CPU sample+H2D is 0.7-1.3 ms above its CPU sample plus its H2D timed apart. The gather probe found a
  gather followed by its copy to be the sum of its parts, so the gap is in the pass or in when it runs.
- `uva-bf16`'s pass is 1.34-1.57 ms on the wall clock while its gather takes 1.24 ms of device time
  (`2026-12-04-uva-layout/`): 0.1-0.3 ms are the host's share, not yet split.

Every mode runs in every round, in a rotating order, on one placement (its own table, sampler and buffers).

Host family (`cpu_sample`, then `h2d`, then the copy stream synchronised):
- `cpu`: `cpu_sample()` back to back (what the CPU sample metric times);
- `cpu-after-spin`: `cpu_sample()` after the main thread busy-waits for `gap_ms` (as long as an H2D takes) while
  torch's workers idle, as they do while the pass's synchronise spins: is a gather slower after its workers idled?
- `cpu-after-sleep`: the same gap slept, so the main thread's core idles too;
- `h2d` (CUDA): the copy alone, CUDA events around each (what the H2D metric times);
- `sample` (CUDA): the placement's own `sample()` under the synchronised wall clock of the CPU sample+H2D metric
  (`measure.timing.time_wall`);
- `pass` (CUDA): the same calls as `sample()`, split by host clock reads into `cpu`, `launch`, `stream_sync` and
  `device_sync`, with CUDA events on the copy stream around the copy (`device`). `stream_sync` minus `device` is what
  the wait costs beyond the copy.

Zero-copy family (`queue()`: the device draw and the gather kernel, then the stream synchronised), CUDA only:
- `device-held`: `queue()` timed by CUDA events behind a GPU hold (device time only, as the uva layout probe);
- `device`: the same without the hold, as the wall clock's pass sees the GPU (launch gaps included);
- `sample`: as above;
- `pass`: `queue()`'s host time (`launch`), `stream_sync`, `device_sync`, and events around `queue()` (`device`);
- `split`: `queue()`'s host time in its parts: the torch sampler's device draw (`draw`; none for the fused
  sampler), the gather's arguments (`args`), `cupy_kernels.launch` (`launch`), then the wait (`stream_sync`);
- `call`: CuPy's kernel call alone, its stream entered and its grid computed outside the clock: with `split`, what
  of the launch is CuPy's and what is rlperf's Python around it.

The host family's CPU modes run without CUDA, so the idle-workers question can be asked on any box. One record per
process (JSON-ready); `summarize` tabulates records; never a best cell.
"""

from __future__ import annotations

import os
import platform
import statistics
import sys
import time

from rlperf.measure.timing import time_cuda, time_wall

CPU_MODES = ("cpu", "cpu-after-spin", "cpu-after-sleep")
HOST_MODES = CPU_MODES + ("h2d", "sample", "pass")
ZERO_COPY_MODES = ("device-held", "device", "sample", "pass", "split", "call")
PASS_PHASES = ("cpu", "launch", "stream_sync", "device_sync", "wall", "device")
SPLIT_PHASES = ("draw", "args", "launch", "stream_sync")
DEFAULT_GAP_MS = 2.24  # the H200 host's H2D of the 116.25 MiB batch (2026-12-04 sweeps); measured when CUDA is up
# Paired per-round ratios the summary shows, where both sides were timed.
RATIOS = (("cpu-after-spin", "cpu"), ("cpu-after-sleep", "cpu"), ("pass.cpu", "cpu"), ("pass.device", "h2d"),
          ("device", "device-held"), ("pass.device", "device-held"), ("sample", "pass.wall"),
          ("call", "split.launch"))


def family_placements() -> dict[str, tuple[str, ...]]:
    """Single-GPU placements per family. Host: those that report a CPU sample, an H2D and the pass (their `sample()`
    is HostReplay's). Zero-copy: the `uva` transfer's."""
    from rlperf.replay.metrics import CPU_SAMPLE, END_TO_END, H2D
    from rlperf.replay.registry import REGISTRY

    single = {name: spec for name, spec in REGISTRY.items() if not spec.multi_rank}
    return {"host": tuple(n for n, s in single.items() if set(s.metrics) == {CPU_SAMPLE, H2D, END_TO_END}),
            "zero-copy": tuple(n for n, s in single.items() if s.transfer == "uva")}


def modes_of(family: str, cuda: bool) -> tuple[str, ...]:
    """The modes a family runs where CUDA is (or is not) up."""
    if family == "zero-copy":
        return ZERO_COPY_MODES
    return HOST_MODES if cuda else CPU_MODES


def _spin(ms: float) -> None:
    end = time.perf_counter_ns() + int(ms * 1e6)
    while time.perf_counter_ns() < end:
        pass


def _cpu_call(pl, mode: str, gap_ms: float) -> dict:
    """One timed call of a CPU mode: its ms, with the gap (spun or slept) before it and outside the clock."""
    if mode == "cpu-after-spin":
        _spin(gap_ms)
    elif mode == "cpu-after-sleep":
        time.sleep(gap_ms / 1e3)
    return {"ms": time_wall(pl.cpu_sample, warmup=0, repeat=1)[0]}


def _pass_call(pl, torch) -> dict:
    """One pass made of the placement's own calls, with host clock reads between them and CUDA events on its stream
    around the device work (the copy of the host family; the draw and gather of the zero-copy family)."""
    before, after = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    host = hasattr(pl, "cpu_sample")
    torch.cuda.synchronize(pl.device)
    t0 = time.perf_counter_ns()
    if host:
        pl.cpu_sample()
    t1 = time.perf_counter_ns()
    before.record(pl.stream)
    if host:
        pl.h2d()
    else:
        pl.queue()
    after.record(pl.stream)
    t2 = time.perf_counter_ns()
    pl.stream.synchronize()
    t3 = time.perf_counter_ns()
    torch.cuda.synchronize(pl.device)
    t4 = time.perf_counter_ns()
    phases = {"launch": (t2 - t1) / 1e6, "stream_sync": (t3 - t2) / 1e6, "device_sync": (t4 - t3) / 1e6,
              "wall": (t4 - t0) / 1e6, "device": before.elapsed_time(after)}
    return {"cpu": (t1 - t0) / 1e6, **phases} if host else phases


def _split_call(pl) -> dict:
    """`queue()` made of its parts (`UvaReplay.draw`, `kernel_call`, `launch`) with host clock reads between them,
    then the stream's wait; each call starts on an idle GPU."""
    from rlperf.replay.placements.cupy_kernels import launch

    pl.stream.synchronize()
    t0 = time.perf_counter_ns()
    if not pl.sampler.in_kernel:
        pl.draw()
    t1 = time.perf_counter_ns()
    call = pl.kernel_call()
    t2 = time.perf_counter_ns()
    launch(*call)
    t3 = time.perf_counter_ns()
    pl.stream.synchronize()
    t4 = time.perf_counter_ns()
    phases = {"args": (t2 - t1) / 1e6, "launch": (t3 - t2) / 1e6, "stream_sync": (t4 - t3) / 1e6}
    return {"draw": (t1 - t0) / 1e6, **phases} if not pl.sampler.in_kernel else phases


def _cupy_call(pl) -> dict:
    """CuPy's kernel call of the gather alone: the draw (torch sampler), the arguments, the grid and the stream's
    context happen outside the clock."""
    from rlperf.measure.cupy_stream import cupy_stream
    from rlperf.replay.placements.cupy_kernels import kernel, launch_grid

    pl.stream.synchronize()
    if not pl.sampler.in_kernel:
        pl.draw()
    name, stream, rows, *args = pl.kernel_call()
    grid, block = launch_grid(name, rows)
    fn = kernel(name)
    with cupy_stream(stream):
        t0 = time.perf_counter_ns()
        fn(grid, block, tuple(args))
        t1 = time.perf_counter_ns()
    pl.stream.synchronize()
    return {"ms": (t1 - t0) / 1e6}


def _call(pl, mode: str, gap_ms: float, torch) -> dict:
    if mode in CPU_MODES:
        return _cpu_call(pl, mode, gap_ms)
    if mode == "h2d":
        return {"ms": time_cuda(pl.h2d, warmup=0, repeat=1, stream=pl.stream)[0]}
    if mode in ("device", "device-held"):
        return {"ms": time_cuda(pl.queue, warmup=0, repeat=1, stream=pl.stream, run_ahead=mode == "device-held")[0]}
    if mode == "sample":
        return {"ms": time_wall(pl.sample, warmup=0, repeat=1, devices=[pl.device])[0]}
    if mode == "split":
        return _split_call(pl)
    if mode == "call":
        return _cupy_call(pl)
    return _pass_call(pl, torch)


def _environment(torch) -> dict:
    """What sets how torch's workers wait between parallel regions (OpenMP's wait policy and spin count)."""
    keys = ("OMP_NUM_THREADS", "OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "KMP_BLOCKTIME", "MKL_NUM_THREADS")
    info = torch.__config__.parallel_info().splitlines()
    return {"env": {k: os.environ.get(k) for k in keys}, "parallel_info": [x.strip() for x in info if x.strip()]}


def _checked(placement: str, modes, cuda: bool) -> tuple[str, tuple[str, ...]]:
    """`placement`'s family and the modes to run, or a ValueError naming the valid choices."""
    families = family_placements()
    family = next((f for f, names in families.items() if placement in names), None)
    if family is None:
        valid = [n for names in families.values() for n in names]
        raise ValueError(f"placement {placement!r} has no pass this probe splits; valid: {', '.join(valid)}")
    if family == "zero-copy" and not cuda:
        raise ValueError(f"{placement} gathers on the GPU: no CUDA device is visible")
    valid = HOST_MODES if family == "host" else ZERO_COPY_MODES
    modes = modes_of(family, cuda) if modes is None else tuple(modes)
    unknown = [m for m in modes if m not in valid]
    if unknown:
        raise ValueError(f"unknown mode(s) {unknown} for {placement}; valid: {', '.join(valid)}")
    if not cuda and any(m not in CPU_MODES for m in modes):
        raise ValueError(f"modes {', '.join(m for m in modes if m not in CPU_MODES)} time the GPU: "
                         "no CUDA device is visible")
    return family, modes


def build_verified(placement: str, capacity_exponent: int, sample_rows: int | None, threads: int, seed: int):
    """The placement set up and one batch verified (`kernel_probe.build`), with the seconds that took."""
    from rlperf.replay import kernel_probe
    from rlperf.replay.cases import ReplayCase

    wl = ReplayCase(kernel_probe.TASK, kernel_probe.SIM, placement, 2**capacity_exponent).workload
    batch = sample_rows or wl.sample_rows_per_rank
    need = max(2 * batch, wl.num_envs + batch)  # the newest step (num_envs rows) is never sampled
    if 2**capacity_exponent < need:
        raise ValueError(f"a table of 2^{capacity_exponent} rows is too small for a {batch:,}-row batch after a "
                         f"{wl.num_envs:,}-row step; use a capacity exponent >= {(need - 1).bit_length()}")
    t0 = time.perf_counter()
    pl = kernel_probe.build(placement, capacity_exponent, seed=seed, sample_rows=batch, threads=threads)
    return pl, time.perf_counter() - t0


def probe(placement: str = "host", *, capacity_exponent: int = 20, threads: int | None = None, rounds: int = 8,
          warmup: int = 2, repeat: int = 10, gap_ms: float | None = None, modes=None, seed: int = 0,
          sample_rows: int | None = None) -> dict:
    """Set `placement` up once (verified), then `rounds` rounds: each times every mode `warmup + repeat` times in
    an order rotated by one per round. Without CUDA only the host family's CPU modes run. `gap_ms`: the idle gap of
    the `-after-` modes (default: the median H2D measured here, else DEFAULT_GAP_MS). `sample_rows`: a smaller
    batch than the workload's (tests)."""
    import torch

    from rlperf.measure.machine import cpu_model, machine_name
    from rlperf.replay.cases import default_torch_threads

    cuda = torch.cuda.is_available()
    family, modes = _checked(placement, modes, cuda)
    threads = threads or default_torch_threads(1)
    pl, setup_s = build_verified(placement, capacity_exponent, sample_rows, threads, seed)
    if gap_ms is None:
        host_copy = cuda and family == "host"
        gap_ms = statistics.median(_call(pl, "h2d", 0, torch)["ms"] for _ in range(5)) if host_copy else DEFAULT_GAP_MS
    load_before = os.getloadavg()
    timings = []
    for rnd in range(rounds):
        order = modes[rnd % len(modes):] + modes[: rnd % len(modes)]
        for mode in order:
            calls = [_call(pl, mode, gap_ms, torch) for _ in range(warmup + repeat)][warmup:]
            timings.append({"round": rnd, "mode": mode, "position": order.index(mode), "calls": calls})
    staging = getattr(pl, "staging", None)
    pinned = bool(staging is not None and cuda and staging.is_pinned())
    return {"pid": os.getpid(), "argv": sys.argv, "placement": placement, "family": family,
            "capacity_rows": pl.capacity_rows, "sample_rows": pl.sample_rows, "threads": threads,
            "torch_threads": torch.get_num_threads(), "affinity": sorted(os.sched_getaffinity(0)),
            "machine": machine_name(), "cpu_model": cpu_model(), "python": platform.python_version(),
            "torch": torch.__version__, "cuda": cuda, "pinned": pinned,
            "setup_s": setup_s, "gap_ms": gap_ms, "load_before": list(load_before), "load_after": list(os.getloadavg()),
            "rounds": rounds, "warmup": warmup, "repeat": repeat, "modes": list(modes), **_environment(torch),
            "timings": timings}


def _round_medians(rec: dict) -> dict[int, dict[str, float]]:
    """Per round: each mode's median ms, and the phases of a mode that splits its call as `<mode>.<phase>`."""
    out: dict[int, dict[str, float]] = {}
    for t in rec["timings"]:
        r = out.setdefault(t["round"], {})
        if "ms" not in t["calls"][0]:
            for ph in t["calls"][0]:
                r[f"{t['mode']}.{ph}"] = statistics.median(c[ph] for c in t["calls"])
        else:
            r[t["mode"]] = statistics.median(c["ms"] for c in t["calls"])
    return out


def _gap(r: dict) -> tuple[str, float] | None:
    """The pass above its parts in one round: sample - cpu - h2d (host), sample - device-held (zero-copy)."""
    if all(k in r for k in ("sample", "cpu", "h2d")):
        return "sample - cpu - h2d", r["sample"] - r["cpu"] - r["h2d"]
    if all(k in r for k in ("sample", "device-held")):
        return "sample - device-held", r["sample"] - r["device-held"]
    return None


def summarize(records: list[dict]) -> str:
    """Markdown: per process, the median over rounds of each mode's (or phase's) round median; then the paired
    per-round ratios and the gap."""
    lines = []
    for k, rec in enumerate(records, 1):
        rounds = _round_medians(rec)
        keys = list(dict.fromkeys(key for r in rounds.values() for key in r))
        lines += [f"### Process {k}: {rec['placement']}, {rec['capacity_rows']:,} rows, {rec['threads']} threads, "
                  f"{rec['machine']}",
                  "",
                  f"{rec['rounds']} interleaved rounds, each mode a median of {rec['repeat']} calls after "
                  f"{rec['warmup']} warmups; idle gap {rec['gap_ms']:.2f} ms; staging "
                  f"{'pinned' if rec['pinned'] else 'pageable or none'}; load before {rec['load_before'][0]:.2f}.",
                  "",
                  "| mode or pass phase | median over rounds, ms | min..max of round medians |",
                  "|---|---:|---:|"]
        for key in keys:
            v = [r[key] for r in rounds.values() if key in r]
            lines.append(f"| {key} | {statistics.median(v):.3f} | {min(v):.3f}..{max(v):.3f} |")
        pairs = [(a, b) for a, b in RATIOS if a in keys and b in keys]
        if pairs:
            lines += ["", "| paired per round | median | min..max |", "|---|---:|---:|"]
            for a, b in pairs:
                v = [r[a] / r[b] for r in rounds.values() if a in r and b in r]
                lines.append(f"| {a} / {b} | {statistics.median(v):.3f} | {min(v):.3f}..{max(v):.3f} |")
        gaps = [g for g in map(_gap, rounds.values()) if g is not None]
        if gaps:
            v = [g for _, g in gaps]
            lines += ["", f"Gap ({gaps[0][0]}, same round): median {statistics.median(v):.3f} ms, "
                      f"{min(v):.3f}..{max(v):.3f} over rounds."]
        lines.append("")
    return "\n".join(lines)


__all__ = ["CPU_MODES", "HOST_MODES", "PASS_PHASES", "SPLIT_PHASES", "ZERO_COPY_MODES", "build_verified",
           "family_placements", "modes_of", "probe", "summarize"]
