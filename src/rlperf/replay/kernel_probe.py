"""Why is one fused gather slower than another? Launch each fused kernel on its real table, for a profiler
(Nsight Compute) or for CUDA-event timings that vary one launch factor at a time (issue 23 §2).

- `profile`: per placement, warm up, then `launches` launches between cudaProfilerStart/Stop (so
  `ncu --profile-from-start off` sees only those) inside an NVTX range named after the placement.
- `variants` / `ab_timings`: the same draw launched with other shapes. Threads per block (rows in flight per
  block) must give the batch of the default launch byte for byte (`same_output` checks it); the compact
  kernel's successor distance (`step_rows` 0: the row itself, 1: the adjacent row) reads other rows, so its
  output differs by design: a diagnostic of where the bytes come from, marked `checked=False`. So are the two
  plan diagnostics (`diagnostic_plan`): `no-mixed` writes zeros for the vectors that straddle a field boundary
  (however the plan builds them), `aligned` loads every whole-run vector from the aligned 16 bytes at or below
  its source (one load, no shifts): what those paths cost.
- One kernel alternative each, checked like the thread counts (same batch), first measured on the H200 on
  2026-12-04 (docs/replay-compact-kernel.md): for gpu-compact-fused, whose default is now the `merge` plan
  (`sample_compact_merge`: straddling vectors joined from whole loads and byte masks), `mixed=bytes`, the
  previous default (`sample_compact`, those vectors byte by byte); for gpu-fused, `vec=int4`, the fp32 row
  copied with 16-byte loads and an 8-byte head or tail (`sample_float2_wide`), not adopted (x0.995).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

import numpy as np

from rlperf.errors import choice_error
from rlperf.replay.placements.cupy_kernels import COMPACT_KERNELS, THREADS

PLACEMENTS = ("gpu-fused-bf16", "gpu-compact-fused", "gpu-fused")
THREADS_CHOICES = (64, 128, 256, 512, 1024)
STEP_CHOICES = (0, 1)  # the successor as the row itself, as the next row (the real one is num_envs rows on)
PLAN_CHOICES = ("no-mixed", "aligned")
# a placement's kernel -> (option, value, the kernel that value launches); the option's plan, if any, from
# compact_merge.plan_for(layout, value)
ALTERNATIVES = {COMPACT_KERNELS["merge"]: ("mixed", "bytes", COMPACT_KERNELS["bytes"]),
                "sample_float2": ("vec", "int4", "sample_float2_wide")}


@dataclass(frozen=True)
class Variant:
    """One launch shape of a placement's fused kernel: `threads` a block, `step_rows` (compact only, None:
    the layout's own successor). `checked`: its batch must equal the default launch's."""

    placement: str
    threads: int = THREADS
    step_rows: int | None = None
    plan: str | None = None  # one of PLAN_CHOICES: a diagnostic plan for the compact kernel
    mixed: str | None = None  # "bytes": the compact kernel's straddling vectors byte by byte (checked)
    vec: str | None = None  # "int4": the fp32 kernel's row with 16-byte loads (checked)

    @property
    def checked(self) -> bool:
        return self.step_rows is None and self.plan is None

    @property
    def label(self) -> str:
        step = "" if self.step_rows is None else f" step={self.step_rows}"
        plan = "" if self.plan is None else f" plan={self.plan}"
        mixed = "" if self.mixed is None else f" mixed={self.mixed}"
        vec = "" if self.vec is None else f" vec={self.vec}"
        return f"{self.placement} threads={self.threads}{step}{plan}{mixed}{vec}"


def variants(placement: str, *, elided: bool, kernel: str | None = None) -> list[Variant]:
    """The default launch first, then one factor changed at a time; `kernel`'s alternative (ALTERNATIVES)
    right after the default, so a timeout cuts the thread counts first."""
    out = [Variant(placement)]
    if kernel in ALTERNATIVES:
        option, value, _ = ALTERNATIVES[kernel]
        out.append(Variant(placement, **{option: value}))
    out += [Variant(placement, threads=t) for t in THREADS_CHOICES if t != THREADS]
    if elided:
        out += [Variant(placement, step_rows=s) for s in STEP_CHOICES]
        out += [Variant(placement, plan=p) for p in PLAN_CHOICES]
    return out


def kernel_of(kernel: str, variant: Variant) -> str:
    """The kernel `variant` launches: `kernel`, or its alternative when the variant picks it."""
    picked = [(o, getattr(variant, o)) for o in ("mixed", "vec") if getattr(variant, o) is not None]
    if not picked:
        return kernel
    option, value, alternative = ALTERNATIVES.get(kernel, (None, None, None))
    if picked != [(option, value)]:
        raise ValueError(f"{variant.label}: kernel {kernel!r} has no such alternative; known: {ALTERNATIVES}")
    return alternative


def diagnostic_plan(vectors: np.ndarray, name: str) -> np.ndarray:
    """A copy of the compact kernel's vector plan (`compact_plan.CompactPlan.vectors`) with one path taken out:
    `no-mixed`: the vectors that straddle a field boundary (MIXED, byte by byte, or MERGE, whole loads) become
    ZERO; `aligned`: ROW and NEXT sources (and terminal offsets) rounded down to 16 bytes, so `load16` takes
    its one-load branch (a MERGE vector's runs, in the shared table, keep theirs). The loads stay inside the
    same rows."""
    from rlperf.replay.compact_plan import MERGE, MIXED, NEXT, ROW, VEC, ZERO

    out = vectors.copy()
    if name == "no-mixed":
        out[np.isin(out[:, 0], (MIXED, MERGE))] = (ZERO, 0, 0, 0)
    elif name == "aligned":
        moved = np.isin(out[:, 0], (ROW, NEXT))
        out[moved, 1:3] = out[moved, 1:3] // VEC * VEC
    else:
        raise choice_error("diagnostic plan", name, PLAN_CHOICES)
    return out


def check_placements(names) -> list[str]:
    """`names` if every one is a fused placement the probe knows, else a UsageError naming the choices."""
    for name in names:
        if name not in PLACEMENTS:
            raise choice_error("placement", name, PLACEMENTS)
    return list(names)


def build(placement: str, exponent: int, *, seed: int = 0):
    """`placement` set up on CUDA device 0 over a prefilled table of 2^exponent g1_motion_tracking rows, one
    batch verified row by row."""
    import torch

    from rlperf.replay.build import build_placement
    from rlperf.replay.cases import ReplayCase

    case = ReplayCase("g1_motion_tracking", "motrix", placement, 2**exponent)
    pl = build_placement(case.spec, case.workload, case.capacity_rows, device=torch.device("cuda", 0),
                         threads=1, seed=seed)
    pl.setup()
    pl.verify()
    return pl


def launcher(pl, variant: Variant, tick: int | None = None):
    """A no-argument call that launches `variant` on `pl`'s stream: draw `tick`, or the next tick each call."""
    import torch

    from rlperf.replay.placements.cupy_kernels import launch

    name = kernel_of(pl.kernel, variant)
    vplan = table = None  # held by the closure while it launches
    if variant.plan is not None:
        vplan = torch.from_numpy(diagnostic_plan(pl.plan.vectors, variant.plan)).to(pl.vplan.device)
    if variant.mixed is not None:  # the alternative plan: its vectors and its shared table
        from rlperf.replay.compact_merge import plan_for

        other = plan_for(pl.layout, variant.mixed)
        vplan = torch.from_numpy(other.vectors).to(pl.vplan.device)
        table = torch.from_numpy(other.mixed_bytes).to(pl.vplan.device)
    if vplan is not None:
        torch.cuda.synchronize()  # copied on the default stream; the launches run on pl.stream
    extra = {} if table is None else {"table": table}

    def call() -> None:
        t = pl.sampler.next_tick() if tick is None else tick
        launch(name, pl.stream, pl.sample_rows, *pl.kernel_args(t, step_rows=variant.step_rows, vplan=vplan, **extra),
               threads=variant.threads)

    return call


def same_output(pl, variant: Variant, tick: int = 10**6) -> bool:
    """Whether `variant` writes the default launch's batch and indices for draw `tick`."""
    import torch

    launcher(pl, Variant(variant.placement), tick)()
    torch.cuda.synchronize()
    want, want_idx = pl.out.clone(), pl.idx.clone()
    pl.out.zero_()
    pl.idx.zero_()
    torch.cuda.synchronize()  # the zeros (default stream) land before the variant's launch (pl.stream)
    launcher(pl, variant, tick)()
    torch.cuda.synchronize()
    return bool(torch.equal(pl.out, want) and torch.equal(pl.idx, want_idx))


def profile(pl, *, placement: str, warmup: int, launches: int, alternatives: bool = False) -> None:
    """Warm up, then `launches` default launches for the profiler (cudaProfilerStart/Stop, NVTX range named by
    the variant); with `alternatives`, the same after it for the kernel's alternative (ALTERNATIVES), if any."""
    import torch

    vs = [Variant(placement)]
    if alternatives:
        vs += [v for v in variants(placement, elided=pl.layout.elide_next, kernel=pl.kernel) if v.mixed or v.vec]
    for v in vs:
        call = launcher(pl, v)
        for _ in range(warmup):
            call()
        torch.cuda.synchronize()
        torch.cuda.profiler.start()
        torch.cuda.nvtx.range_push(v.label)
        for _ in range(launches):
            call()
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()
        torch.cuda.profiler.stop()


def ab_timings(pl, placement: str, *, rounds: int, warmup: int = 5, repeat: int = 20, inner: int = 10) -> list[dict]:
    """Per variant: identical output (or not checked), then CUDA-event medians (ms per launch, device time
    only) in `rounds` rounds that interleave the variants, so drift touches all alike."""
    from rlperf.measure.timing import time_cuda

    vs = variants(placement, elided=pl.layout.elide_next, kernel=pl.kernel)
    rows = [{"placement": placement, "variant": v.label, "threads": v.threads, "step_rows": v.step_rows,
             "plan": v.plan, "mixed": v.mixed, "vec": v.vec, "kernel": kernel_of(pl.kernel, v), "checked": v.checked,
             "same_output": same_output(pl, v) if v.checked else None, "medians_ms": []} for v in vs]
    for _ in range(rounds):
        for v, row in zip(vs, rows):
            samples = time_cuda(launcher(pl, v), warmup=warmup, repeat=repeat, stream=pl.stream, inner=inner,
                                run_ahead=True)
            row["medians_ms"].append(statistics.median(samples))
    for row in rows:
        row["median_ms"] = statistics.median(row["medians_ms"])
    return rows


__all__ = ["ALTERNATIVES", "PLACEMENTS", "PLAN_CHOICES", "Variant", "ab_timings", "build", "check_placements",
           "diagnostic_plan", "kernel_of", "launcher", "profile", "same_output", "variants"]
