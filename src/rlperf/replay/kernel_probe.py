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
- Work units a row for the whole-row kernels (`parts`, PARTS): each row copied by 1, 2 or 4 warps, the placement's
  own split (cupy_kernels.ROW_SPLITS: gpu-fused's fp32 rows go over 4 warps since 2026-12-05) being the default
  launch, and the unsplit row in half the registers (`unroll=half`), checked like the thread counts (issue 23: a
  launch's tail, the DRAM rate, or the bytes in flight? The A/B gives each kernel's registers a thread, which set
  how many warps an SM holds, and its warps a row). The other builds (`vec`, `hint`, `unroll`) copy whole rows, one
  warp each: on a split placement they differ from the default in that too, which their A/B row's warps say.
- Cache hints for the whole-row kernels (gpu-fused, gpu-fused-bf16; `hint`, HINTS): the same copy with evict-first
  loads or stores, or read-only loads with a 256-byte L2 prefetch, checked like the thread counts (issue 23: the fp32
  gather is 2 % over its target and reads DRAM at 74 % of peak; which policy, if any, moves it is measured, not
  assumed).
- One other layout, for gpu-compact-fused only: `layout=a16` launches the same kernel code (under the name
  `sample_compact_a16`, so Nsight Compute tells it apart) on a second placement over compact-a16 rows, where no
  batch vector straddles two source runs and every load is aligned (docs/replay-compact-kernel.md, "The aligned
  layout"). Its batch differs from the default's by padding, so it is checked field by field: the default
  storage's transitions are copied into it (`relayout.copy_transitions`), and its batch must hold the default
  batch's bytes in every field and zeros in its padding (`relayout.same_fields`), with the same indices.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

import numpy as np

from rlperf.errors import choice_error
from rlperf.replay.placements.cupy_kernels import COMPACT_KERNELS, ROW_SPLITS, THREADS, split_build

PLACEMENTS = ("gpu-fused-bf16", "gpu-compact-fused", "gpu-fused")
TASK, SIM = "g1_motion_tracking", "motrix"  # the workload every probe placement is built for
THREADS_CHOICES = (64, 128, 256, 512, 1024)
STEP_CHOICES = (0, 1)  # the successor as the row itself, as the next row (the real one is num_envs rows on)
PLAN_CHOICES = ("no-mixed", "aligned")
# a placement's kernel -> (option, value, the kernel that value launches); the option's plan, if any, from
# compact_merge.plan_for(layout, value)
ALTERNATIVES = {COMPACT_KERNELS["merge"]: ("mixed", "bytes", COMPACT_KERNELS["bytes"]),
                "sample_float2": ("vec", "int4", "sample_float2_wide")}
# Cache policies of the whole-row kernels' loads and stores (cupy_kernels.SAMPLE_KERNELS): the `hint` option's value
# -> the suffix of the kernel it launches, for each kernel in HINTED. Checked: the same batch byte for byte.
HINTS = {"ld-cs": "_ldcs", "st-cs": "_stcs", "cs": "_cs", "l2pf": "_l2pf", "l2pf-st-cs": "_l2pf_stcs"}
HINTED = ("sample_int4", "sample_float2")
# Work units a row for the whole-row kernels (HINTED): `parts` P launches the kernel's `_pP` build, each row copied by
# P warps (a P-th of its vectors each, a P-th of the registers for them) and P times the warps launched. Checked. The
# question it answers: is the fp32 gather's gap to the copy a launch's tail (the last rows run while the rest of the
# GPU idles; shorter work units shorten it) or the random rows' DRAM rate (no change)? `unroll=half` (`_uhalf`) is
# the unsplit row in half the registers: what the registers alone change.
PARTS = (1, 2, 4)
UNROLLS = {"half": "_uhalf"}
# the whole-row kernels' other builds (cupy_kernels.SAMPLE_KERNELS): option -> {value: the build's name suffix}
WHOLE_ROW_BUILDS = {"hint": HINTS, "parts": {p: split_build("", p) for p in PARTS}, "unroll": UNROLLS}
# a placement's kernel -> (value of the `layout` option, the registered layout that variant's placement stores,
# the kernel it launches: the same code under its own name)
OTHER_LAYOUTS = {COMPACT_KERNELS["merge"]: ("a16", "compact-a16", "sample_compact_a16")}


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
    layout: str | None = None  # "a16": the compact kernel over compact-a16 rows (checked field by field)
    hint: str | None = None  # one of HINTS: a whole-row kernel's loads or stores under another cache policy (checked)
    parts: int | None = None  # one of PARTS: a whole-row kernel's row copied by that many warps (checked); None:
    # the placement's own (ROW_SPLITS)
    unroll: str | None = None  # one of UNROLLS: a whole-row kernel with fewer vectors a lane in flight (checked)

    @property
    def checked(self) -> bool:
        return self.step_rows is None and self.plan is None

    @property
    def compared(self) -> str:
        """How a checked variant's batch is held to the default's: "bytes", or "fields" for another layout."""
        return "bytes" if self.layout is None else "fields"

    @property
    def label(self) -> str:
        step = "" if self.step_rows is None else f" step={self.step_rows}"
        plan = "" if self.plan is None else f" plan={self.plan}"
        mixed = "" if self.mixed is None else f" mixed={self.mixed}"
        vec = "" if self.vec is None else f" vec={self.vec}"
        layout = "" if self.layout is None else f" layout={self.layout}"
        hint = "" if self.hint is None else f" hint={self.hint}"
        parts = "" if self.parts is None else f" parts={self.parts}"
        unroll = "" if self.unroll is None else f" unroll={self.unroll}"
        return f"{self.placement} threads={self.threads}{step}{plan}{mixed}{vec}{layout}{hint}{parts}{unroll}"


def variants(placement: str, *, elided: bool, kernel: str | None = None) -> list[Variant]:
    """The default launch first, then one factor changed at a time; `kernel`'s alternative (ALTERNATIVES) and
    other layout (OTHER_LAYOUTS) right after the default, so a timeout cuts the thread counts first."""
    out = [Variant(placement)]
    if kernel in ALTERNATIVES:
        option, value, _ = ALTERNATIVES[kernel]
        out.append(Variant(placement, **{option: value}))
    if kernel in OTHER_LAYOUTS:
        out.append(Variant(placement, layout=OTHER_LAYOUTS[kernel][0]))
    if kernel in HINTED:
        out += [Variant(placement, parts=p) for p in PARTS if p != ROW_SPLITS[kernel]]
        out += [Variant(placement, unroll=u) for u in UNROLLS]
        out += [Variant(placement, hint=h) for h in HINTS]
    out += [Variant(placement, threads=t) for t in THREADS_CHOICES if t != THREADS]
    if elided:
        out += [Variant(placement, step_rows=s) for s in STEP_CHOICES]
        out += [Variant(placement, plan=p) for p in PLAN_CHOICES]
    return out


def kernel_of(kernel: str, variant: Variant) -> str:
    """The kernel `variant` launches: `kernel` as the placement launches it (its own split, ROW_SPLITS), or its
    alternative (or another build, or other layout's name) when the variant picks it."""
    options = ("mixed", "vec", "layout", "hint", "parts", "unroll")
    picked = [(o, getattr(variant, o)) for o in options if getattr(variant, o) is not None]
    if not picked:
        return split_build(kernel, ROW_SPLITS.get(kernel, 1))
    option = picked[0][0]
    if option in WHOLE_ROW_BUILDS:  # another build of a whole-row kernel: its name plus the value's suffix
        suffixes, value = WHOLE_ROW_BUILDS[option], getattr(variant, option)
        if len(picked) > 1 or kernel not in HINTED or value not in suffixes:
            raise ValueError(f"{variant.label}: kernel {kernel!r} has no such {option}; {option} {list(suffixes)} "
                             f"for the kernels {HINTED}, one option at a time")
        return kernel + suffixes[value]
    if picked[0][0] == "layout":
        value, _, name = OTHER_LAYOUTS.get(kernel, (None, None, None))
        if picked != [("layout", value)]:
            raise ValueError(f"{variant.label}: kernel {kernel!r} has no such layout; known: {OTHER_LAYOUTS}")
        return name
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


def build(placement: str, exponent: int, *, seed: int = 0, sample_rows: int | None = None, threads: int = 1):
    """`placement` set up on the learner device (CUDA device 0; the CPU where there is none) over a prefilled table
    of 2^exponent g1_motion_tracking rows, one batch verified row by row. `sample_rows`: a batch other than the
    workload's (its output buffer holds that many rows; a launch may then draw fewer). `threads`: torch's, for the
    host placements' CPU gather."""
    from rlperf.replay.build import build_placement
    from rlperf.replay.cases import ReplayCase
    from rlperf.replay.run import learner_device

    case = ReplayCase(TASK, SIM, placement, 2**exponent)
    pl = build_placement(case.spec, case.workload, case.capacity_rows, device=learner_device(), threads=threads,
                         seed=seed)
    if sample_rows is not None:
        pl.sample_rows = sample_rows
    pl.setup()
    pl.verify()
    return pl


def other_layout(pl, value: str):
    """`pl`'s placement over the layout that `layout=value` names (OTHER_LAYOUTS), built once and kept on `pl`:
    same spec otherwise, workload (the probe's), capacity and seed, its storage holding `pl`'s transitions."""
    from rlperf.replay.build import build_placement
    from rlperf.replay.placements.specs import combination
    from rlperf.replay.relayout import copy_transitions
    from rlperf.workload import compose

    kept = pl.__dict__.setdefault("probe_layouts", {})
    if value not in kept:
        entry = OTHER_LAYOUTS.get(getattr(pl, "kernel", None))
        if entry is None or entry[0] != value:
            raise choice_error(f"other layout of {pl.name}", value, [entry[0]] if entry else [])
        spec = combination(storage=f"{pl.spec.kind}-{entry[1]}", sampler=pl.spec.sampler, transfer=pl.spec.transfer)
        wl = compose(TASK, SIM)
        if (wl.layout, wl.sample_rows_per_rank, wl.num_envs) != (pl.layout.dims, pl.sample_rows, pl.step_rows):
            raise ValueError(f"{pl.name} was not built for the probe's workload {TASK}/{SIM}")
        # empty: the copy fills it, every page written
        other = build_placement(spec, wl, pl.capacity_rows, device=pl.device, threads=pl.threads, seed=pl.seed,
                                prefill=False)
        other.setup()  # on a GPU this sets up its kernel and plan too
        copy_transitions(pl.storage, other.storage)
        if other.device is not None:
            import torch

            torch.cuda.synchronize(other.device)  # the copy (default stream) lands before launches on its stream
        kept[value] = other
    return kept[value]


def placement_of(pl, variant: Variant):
    """The placement `variant` launches on: `pl`, or for another layout `other_layout(pl, ...)` (its own table,
    output and stream: time it on that stream)."""
    return pl if variant.layout is None else other_layout(pl, variant.layout)


def launcher(pl, variant: Variant, tick: int | None = None):
    """A no-argument call that launches `variant` on `pl`'s stream (or, for another layout, on that layout's
    placement's: `other_layout`): draw `tick`, or the next tick each call."""
    import torch

    from rlperf.replay.placements.cupy_kernels import launch

    name = kernel_of(pl.kernel, variant)
    pl = placement_of(pl, variant)
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
    """Whether `variant` writes the default launch's batch and indices for draw `tick`: byte for byte, or for
    another layout field by field with its padding zero (`relayout.same_fields`)."""
    import torch

    launcher(pl, Variant(variant.placement), tick)()
    torch.cuda.synchronize()
    want, want_idx = pl.out.clone(), pl.idx.clone()
    target = placement_of(pl, variant)
    if variant.layout is None:
        target.out.zero_()
    else:
        target.out.fill_(-1.0)  # not zeros: padding the variant leaves unwritten must not pass as zero
    target.idx.zero_()
    torch.cuda.synchronize()  # these writes (default stream) land before the variant's launch (its stream)
    launcher(pl, variant, tick)()
    torch.cuda.synchronize()
    if not torch.equal(target.idx, want_idx):
        return False
    if variant.layout is None:
        return bool(torch.equal(target.out, want))
    from rlperf.replay.relayout import same_fields

    return same_fields(want, pl.layout, target.out, target.layout)


def profile(pl, *, placement: str, warmup: int, launches: int, alternatives: bool = False) -> None:
    """Warm up, then `launches` default launches for the profiler (cudaProfilerStart/Stop, NVTX range named by
    the variant); with `alternatives`, the same after it for the kernel's alternative (ALTERNATIVES), if any."""
    import torch

    vs = [Variant(placement)]
    if alternatives:
        vs += [v for v in variants(placement, elided=pl.layout.elide_next, kernel=pl.kernel)
               if v.mixed or v.vec or v.layout or v.hint or v.parts or v.unroll]
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
    rows = [_ab_row(pl, placement, v) for v in vs]
    for _ in range(rounds):
        for v, row in zip(vs, rows):
            samples = time_cuda(launcher(pl, v), warmup=warmup, repeat=repeat, stream=placement_of(pl, v).stream,
                                inner=inner, run_ahead=True)
            row["medians_ms"].append(statistics.median(samples))
    for row in rows:
        row["median_ms"] = statistics.median(row["medians_ms"])
    return rows


def _ab_row(pl, placement: str, v: Variant) -> dict:
    """One A/B row before timing: the variant's factors, the kernel it launches with that kernel's registers a
    thread and warps a row, and whether its batch is the default's."""
    from rlperf.replay.placements.cupy_kernels import registers, warps_a_row

    kernel = kernel_of(pl.kernel, v)
    return {"placement": placement, "variant": v.label, "threads": v.threads, "step_rows": v.step_rows,
            "plan": v.plan, "mixed": v.mixed, "vec": v.vec, "layout": v.layout, "hint": v.hint, "parts": v.parts,
            "unroll": v.unroll, "registers": registers(kernel), "kernel": kernel,
            "warps_a_row": warps_a_row(kernel), "checked": v.checked,
            "compared": v.compared, "same_output": same_output(pl, v) if v.checked else None, "medians_ms": []}


__all__ = ["ALTERNATIVES", "HINTED", "HINTS", "OTHER_LAYOUTS", "PARTS", "PLACEMENTS", "PLAN_CHOICES", "UNROLLS",
           "Variant", "ab_timings", "build", "check_placements", "diagnostic_plan", "kernel_of", "launcher",
           "other_layout", "placement_of", "profile", "same_output", "variants"]
