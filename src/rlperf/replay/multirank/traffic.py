"""Traffic, memory and time model of multi-rank replay, per rank and for the whole machine.

The measured runs report the same per-rank byte keys as `rank_traffic`, so model and measurement are
compared key by key; the time model turns bytes into milliseconds with the single-H200 ceilings of
docs/limits.md 1.2-1.4 and the host assumptions in `Host`. Torch-free.

    rlperf traffic   # the tables of docs/tier2-plan.md (cells from here, Markdown by report.traffic_markdown)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from rlperf.measure.guards import DEVICE_SAFETY_FACTOR, HOST_FRACTION, gib
from rlperf.replay.multirank.specs import RANK_SPECS
from rlperf.replay.placements.specs import INDEX_BYTES

GIB = 2**30
PLACEMENTS = tuple(RANK_SPECS)
GPU_COUNTS = (1, 2, 4, 8)
PREDICT_EXPONENTS = tuple(range(20, 27))
MEMORY_EXPONENTS = tuple(range(20, 31))
PRODUCTION_GUARD = 0.8  # the reference GPU-resident pipeline: need <= 0.8 x free


# ---- bytes per learner iteration ------------------------------------------------------------------
def rank_traffic(placement: str, row_bytes: int, sample_rows: int, world: int, *, cuda: bool = True) -> dict:
    """Bytes one rank moves per learner batch, in the keys the rank placements measure.

    h2d: PCIe host -> its GPU; host_read: replay-table bytes read in host memory; device_read: HBM
    bytes read by gathers; interconnect_in/out: bytes crossing NVLink (rows + int64 requests; the N
    per-owner counts are ignored).
    """
    batch = sample_rows * row_bytes
    out = {"h2d": 0.0, "host_read": 0.0, "device_read": 0.0, "interconnect_in": 0.0, "interconnect_out": 0.0}
    if placement == "shared-host":
        out.update(h2d=batch if cuda else 0, host_read=batch)
    elif placement in ("gpu-replica", "rank-local"):
        out.update(device_read=batch)
    elif placement == "sharded-global":
        remote = (world - 1) / world * sample_rows * (row_bytes + INDEX_BYTES)
        out.update(device_read=2 * batch, interconnect_in=remote, interconnect_out=remote)  # gather + reorder
    else:
        raise KeyError(placement)
    return {k: float(v) for k, v in out.items()}


def rank_dram_bytes(placement: str, row_bytes: int, sample_rows: int, *, cuda: bool = True) -> int:
    """Host DRAM bytes of one rank: a CPU gather reads the rows, write-allocates and writes the staging
    lines (3 x batch), and the H2D DMA reads the staging once more (no LLC reuse assumed)."""
    if placement != "shared-host":
        return 0
    batch = sample_rows * row_bytes
    return 3 * batch + (batch if cuda else 0)


# ---- row sizes --------------------------------------------------------------------------------------
def layout_row_bytes(obs: int, act: int, critic: int) -> dict[str, int]:
    """Bytes per stored row of each layout of docs/limits.md 2.10."""
    width = 2 * obs + act + 3 + 2 * critic
    pad16 = lambda n: -(-n // 16) * 16  # noqa: E731
    return {
        "packed fp32": width * 4,
        "padded fp32": pad16(width * 4),
        "padded bf16": pad16(width * 2),
        "next-obs elided fp32": (obs + act + 3 + critic) * 4,
        "elided, bf16 + fp32 scalars": (obs + act + critic) * 2 + 3 * 4,
    }


# ---- memory and what fits ---------------------------------------------------------------------------
def device_fit(need_bytes: float, free_bytes: float) -> str:
    """ok: within the production guard (x1.15 <= 0.8 x free); tight: within free only; no."""
    guarded = need_bytes * DEVICE_SAFETY_FACTOR
    return "ok" if guarded <= PRODUCTION_GUARD * free_bytes else "tight" if guarded <= free_bytes else "no"


def host_fit(host_bytes: float, shm_bytes: float, ram_bytes: float) -> str:
    """ok when the host total is within 0.8 x RAM and the shared table within /dev/shm (RAM / 2)."""
    return "ok" if host_bytes <= HOST_FRACTION * ram_bytes and shm_bytes <= ram_bytes / 2 else "no"


# ---- time model -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Rates:
    """Single-H200 machine ceilings [H200, docs/limits.md 1.2-1.4] and two assumptions."""

    h2d_Bps: float = 55.3e9  # pinned H2D, 116.25 MiB batch
    d2d_Bps: float = 4.2e12  # 2 GiB device copy, read + write
    gpu_gather_ms: float = 0.119  # index_select(out=) of the MT batch (121.9 MB), packed rows, 2^20 table
    gpu_randint_ms: float = 0.02
    sync_ms: float = 0.0077  # idle torch.cuda.synchronize
    cpu_gather_ms: float = 2.07  # 16-thread index_select of the MT batch into pinned staging, 2^20 table
    cpu_gather_threads: int = 16
    cpu_gather_2_23_ms: float = 2.49  # same from a 2^23 table (TLB and page misses)
    host_serial_ms: float = 4.85  # gather (16 threads) + H2D + sync, measured as one pass
    uva_Bps: float = 50.2e9
    nvlink_busbw_Bps: float = 360e9  # NCCL bus bandwidth on H100/H200-class NVLink [ref]
    collective_ms: float = 0.03  # [assumed] one small NCCL collective incl. launch, intra-node
    small_ops_ms: float = 0.03  # [assumed] argsort + bincount + index_select of 32k int64 indices

    @property
    def mt_batch_bytes(self) -> int:
        return 32_768 * 3_720

    @property
    def host_overhead_ms(self) -> float:
        """What the measured serial host pass adds to gather + copy (randint on the CPU, syncs)."""
        return self.host_serial_ms - self.cpu_gather_ms - self.mt_batch_bytes / self.h2d_Bps * 1e3


@dataclass(frozen=True)
class Host:
    """[assumed] the multi-GPU host: HGX 8 x H200 on 2 x Xeon Platinum 8568Y+ (docs/limits.md 1.2)."""

    name: str = "2 x Xeon Platinum 8568Y+, 8 x DDR5-5600 per socket"
    sockets: int = 2
    socket_dram_Bps: float = 358.4e9  # theoretical per socket
    sustained: float = 0.75  # share of theoretical DRAM bandwidth reached by gathers and DMA
    threads_per_rank: int = 16  # the lent 2/4/8-GPU machines give 32/64/128 vCPUs: 16 per rank
    ram_bytes: int = 560 * GIB
    device_free_bytes: int = 139 * GIB

    @property
    def node_Bps(self) -> float:
        return self.sustained * self.socket_dram_Bps


def _ranks_on_busiest_node(world: int, host: Host) -> int:
    return math.ceil(world / host.sockets)  # GPUs split evenly over the sockets, ranks bound to their GPU's node


def host_path_ms(row_bytes: int, sample_rows: int, world: int, capacity_exponent: int, *, numa: str,
                 rates: Rates = Rates(), host: Host = Host()) -> dict[str, float]:
    """shared-host per rank: CPU sample, H2D and the serial end-to-end pass, each the max of the
    thread-bound and DRAM-bound times. numa: 'one-node' (table first-touched on node 0) or
    'interleaved' (table pages spread over the sockets)."""
    batch = sample_rows * row_bytes
    local = _ranks_on_busiest_node(world, host)
    table_share = 1.0 if numa == "one-node" else 1.0 / host.sockets
    tlb = (rates.cpu_gather_2_23_ms / rates.cpu_gather_ms) ** (max(capacity_exponent - 20, 0) / 3)
    thread_ms = rates.cpu_gather_ms * rates.cpu_gather_threads / host.threads_per_rank \
        * batch / rates.mt_batch_bytes * tlb
    dram_ms = (world * batch * table_share + local * 2 * batch) / host.node_Bps * 1e3
    cpu = max(thread_ms, dram_ms)
    h2d = max(batch / rates.h2d_Bps, local * batch / host.node_Bps) * 1e3
    uva = max(batch / rates.uva_Bps, world * batch * table_share / host.node_Bps) * 1e3
    return {"cpu_sample": cpu, "h2d": h2d, "end_to_end": cpu + h2d + rates.host_overhead_ms, "uva": uva}


def device_path_ms(placement: str, row_bytes: int, sample_rows: int, world: int, *, rates: Rates = Rates()) -> float:
    """gpu-replica / rank-local / sharded-global per rank, as timed: wall clock to a synced device."""
    batch = sample_rows * row_bytes
    gather = rates.gpu_gather_ms * batch / rates.mt_batch_bytes
    base = rates.gpu_randint_ms + gather + rates.sync_ms
    if placement in ("gpu-replica", "rank-local"):
        return base
    if placement != "sharded-global":
        raise KeyError(placement)
    remote = (world - 1) / world * sample_rows * (row_bytes + INDEX_BYTES)
    return (base + rates.small_ops_ms + 3 * rates.collective_ms + rates.sync_ms  # counts, indices, rows; D2H
            + remote / rates.nvlink_busbw_Bps * 1e3 + gather)  # rows over NVLink, then the reorder


# ---- tables -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Table:
    """One table of the model as formatted cells; `report.traffic_markdown` writes it as Markdown.
    labels: how many leading columns name the row (the rest are figures)."""

    headers: list[str]
    rows: list[list[str]]
    labels: int = 1


def traffic_table(wl) -> Table:
    s, row = wl.sample_rows_per_rank, wl.row_bytes
    rows = []
    for p in PLACEMENTS:
        for n in GPU_COUNTS:
            t = rank_traffic(p, row, s, n)
            dram = rank_dram_bytes(p, row, s)
            rows.append([p, str(n), *(f"{t[k] / 1e6:,.1f}" for k in ("h2d", "host_read", "device_read")),
                         f"{dram / 1e6:,.1f}", f"{t['interconnect_out'] / 1e6:,.1f}",
                         f"{n * t['h2d'] / 1e6:,.1f}", f"{n * dram / 1e9:,.2f}",
                         f"{n * t['interconnect_out'] / 1e6:,.1f}", f"{wl.with_gpus(n).global_sample_new_ratio:g}x"])
    return Table(["placement", "GPUs", "H2D MB", "host table read MB", "HBM gather read MB", "host DRAM MB",
                   "NVLink out MB (= in)", "global H2D MB", "global host DRAM GB", "global NVLink MB",
                  "global sample:new"], rows)


def layout_table(mt, walk) -> Table:
    a = layout_row_bytes(mt.obs_dim, mt.action_dim, mt.critic_dim)
    b = layout_row_bytes(walk.obs_dim, walk.action_dim, walk.critic_dim)
    return Table(["layout", f"B/row {mt.task}", f"B/row {walk.task}", "MT storage 2^26 GiB", "MT 2^28 GiB"],
                 [[k, f"{a[k]:,}", f"{b[k]:,}", gib(a[k] * 2**26, 1), gib(a[k] * 2**28, 1)] for k in a])


def device_memory_table(wl, host: Host = Host()) -> Table:
    """Per-GPU need of gpu-replica (any N) and sharded-global at 2/4/8 GPUs (rank-local needs 2 S rows less)."""
    rows = []
    for layout, row in layout_row_bytes(wl.obs_dim, wl.action_dim, wl.critic_dim).items():
        for p, n in (("gpu-replica", 1), ("sharded-global", 2), ("sharded-global", 4), ("sharded-global", 8)):
            cells = []
            for capacity_exponent in MEMORY_EXPONENTS:
                need = RANK_SPECS[p].memory(row, 2**capacity_exponent, wl.sample_rows_per_rank, n).device_bytes
                cells.append(f"{gib(need, 1)} {device_fit(need, host.device_free_bytes)}")
            rows.append([layout, "gpu-replica (any N)" if p == "gpu-replica" else f"{p}, {n} GPUs", *cells])
    return Table(["layout", "placement", *(f"2^{e}" for e in MEMORY_EXPONENTS)], rows, labels=2)


def host_memory_table(wl, rams=(128 * GIB, 560 * GIB), world: int = 8) -> Table:
    rows = []
    for layout, row in layout_row_bytes(wl.obs_dim, wl.action_dim, wl.critic_dim).items():
        cells = []
        for capacity_exponent in MEMORY_EXPONENTS:
            need = RANK_SPECS["shared-host"].memory(row, 2**capacity_exponent, wl.sample_rows_per_rank, world)
            cells.append(gib(need.host_bytes, 1) + " " + "/".join(host_fit(need.host_bytes, need.shm_bytes, r)
                                                                 for r in rams))
        rows.append([layout, *cells])
    return Table(["layout", *(f"2^{e}" for e in MEMORY_EXPONENTS)], rows)


def largest_fit_table(wl, host: Host = Host()) -> Table:
    """Largest capacity exponent each placement and layout can hold on 8 x H200 and on 128 / 560 GiB hosts."""
    def largest(ok) -> str:
        fits = [e for e in MEMORY_EXPONENTS if ok(e)]
        return f"2^{max(fits)}" if fits else "-"

    rows = []
    for layout, row in layout_row_bytes(wl.obs_dim, wl.action_dim, wl.critic_dim).items():
        cells = []
        for p in ("gpu-replica", "rank-local", "sharded-global"):
            need = lambda e, p=p: RANK_SPECS[p].memory(row, 2**e, wl.sample_rows_per_rank, 8).device_bytes  # noqa: E731
            cells.append(largest(lambda e: device_fit(need(e), host.device_free_bytes) == "ok") + " / "
                         + largest(lambda e: device_fit(need(e), host.device_free_bytes) != "no"))
        for ram in (128 * GIB, 560 * GIB):
            m = lambda e: RANK_SPECS["shared-host"].memory(row, 2**e, wl.sample_rows_per_rank, 8)  # noqa: E731
            cells.append(largest(lambda e: host_fit(m(e).host_bytes, m(e).shm_bytes, ram) == "ok"))
        rows.append([layout, *cells])
    return Table(["layout", "gpu-replica (ok / tight)", "rank-local, 8 GPUs", "sharded-global, 8 GPUs",
                  "shared-host, 128 GiB host", "shared-host, 560 GiB host"], rows)


def prediction_rows(wl, gpu_counts=GPU_COUNTS, capacity_exponents=PREDICT_EXPONENTS, rates: Rates = Rates(),
                    host: Host = Host()) -> list[list[str]]:
    """One row per (placement, metric, GPUs): predicted exposed ms per capacity, or why it is skipped."""
    s, row = wl.sample_rows_per_rank, wl.row_bytes
    rows = []
    series = [(f"shared-host ({numa} table)", metric, numa) for numa in ("one-node", "interleaved")
              for metric in ("cpu_sample", "h2d", "end_to_end")]
    series += [("shared-host-uva (model only)", "uva", "one-node")]
    series += [(p, "gpu_sample", None) for p in ("gpu-replica", "rank-local", "sharded-global")]
    for label, metric, numa in series:
        placement = label.split(" ")[0].removesuffix("-uva")
        for n in gpu_counts:
            cells = []
            for capacity_exponent in capacity_exponents:
                need = RANK_SPECS[placement].memory(row, 2**capacity_exponent, s, n)
                fits = (host_fit(need.host_bytes, need.shm_bytes, host.ram_bytes) == "ok"
                        and device_fit(need.device_bytes, host.device_free_bytes) != "no")
                if not fits:
                    cells.append("skip")
                elif numa:
                    ms = host_path_ms(row, s, n, capacity_exponent, numa=numa, rates=rates, host=host)[metric]
                    cells.append(f"{ms:.2f}")
                else:
                    cells.append(f"{device_path_ms(placement, row, s, n, rates=rates):.3f}")
            rows.append([label, metric, str(n), *cells])
    return rows


def prediction_table(wl, **kw) -> Table:
    return Table(["placement", "metric", "GPUs", *(f"2^{e}" for e in PREDICT_EXPONENTS)], prediction_rows(wl, **kw),
                 labels=2)


REFERENCE_813 = {1: (6.1, 0.12), 4: (10.2, 0.43), 8: (20.0, 0.84)}  # CPU sample+H2D, GPU sample [ref #813]


def reference_table(walk, rates: Rates = Rates(), host: Host = Host()) -> Table:
    """The #813 thread-per-rank numbers (walk/motrix shape) against this model at 2^20 rows."""
    s, row = walk.sample_rows_per_rank, walk.row_bytes
    rows = []
    for n, (ref_e2e, ref_gpu) in REFERENCE_813.items():
        one = host_path_ms(row, s, n, 20, numa="one-node", rates=rates, host=host)["end_to_end"]
        inter = host_path_ms(row, s, n, 20, numa="interleaved", rates=rates, host=host)["end_to_end"]
        gpu = device_path_ms("gpu-replica", row, s, n, rates=rates)
        rows.append([str(n), f"{ref_e2e:.1f}", f"{one:.2f}", f"{inter:.2f}", f"{ref_e2e / one:.1f}x",
                     f"{ref_gpu:.2f}", f"{gpu:.3f}", f"{ref_gpu / gpu:.1f}x"])
    return Table(["GPUs", "ref CPU sample+H2D ms", "model shared-host e2e (one-node)", "model (interleaved)",
                  "ref / model", "ref GPU sample ms", "model gpu-replica", "ref / model"], rows, labels=0)
