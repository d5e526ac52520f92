"""Skip reasons for a multi-rank case, decided before any process is spawned or byte allocated.

Torch-free (the asv suite decides most points with `Resources.probe_cheap`). Order: GPU count,
placement family, shard divisibility, host RAM, /dev/shm (the shared table), device memory per rank.
"""

from __future__ import annotations

import shutil

from rlperf.measure import guards
from rlperf.replay.multirank.specs import RANK_SPECS

SHM_PATH = "/dev/shm"


def shm_free_bytes(path: str = SHM_PATH) -> int:
    try:
        return int(shutil.disk_usage(path).free)
    except OSError:
        return 0


def feasibility(case, res, *, cpu_ranks: bool = False, shm_free: int | None = None) -> guards.Verdict:
    """ok=True when `case` (a ReplayCase with a RANK_SPECS placement) can run on `res`.

    `cpu_ranks=True` runs the ranks on the CPU with gloo (tests, development): no GPU count check,
    and every rank's "device" bytes are host bytes.
    """
    n = case.gpus
    if not cpu_ranks and n > res.cuda_devices:
        return guards.Verdict(False, f"needs {n} GPUs, {res.cuda_devices} visible")
    spec = RANK_SPECS.get(case.placement)
    if spec is None:
        return guards.Verdict(False, f"placement {case.placement!r} is single-process; its {n}-GPU forms are "
                                     f"{', '.join(RANK_SPECS)}")
    if spec.sharded and case.capacity_rows % n:
        return guards.Verdict(False, f"{case.placement}: capacity {case.capacity_rows:,} rows does not split "
                                     f"into {n} equal shards")
    wl = case.workload
    need = spec.memory_need(wl.layout, case.capacity_rows, wl.sample_rows_per_rank, n)
    what = f"{case.placement} at {case.capacity_rows:,} rows on {n} ranks"
    host = need.host_bytes + (n * need.device_bytes if cpu_ranks else 0)
    if host:
        verdict = guards.check_host(host, what, res.host_available_bytes)
        if not verdict.ok:
            return verdict
    if need.shm_bytes:
        free = shm_free_bytes() if shm_free is None else shm_free
        if need.shm_bytes > free:
            return guards.Verdict(False, f"shared memory: {what} needs {guards.gib_and_bytes(need.shm_bytes)} in "
                                         f"{SHM_PATH}, free {guards.gib_and_bytes(free)}")
    if not cpu_ranks and need.device_bytes:
        verdict = guards.check_device(need.device_bytes, f"{what} (per rank)", res.device_free_bytes, "each GPU")
        if not verdict.ok:
            return verdict
    missing = spec.unavailable_reason()
    return guards.Verdict(False, missing) if missing else guards.Verdict(True)
