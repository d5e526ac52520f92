"""Where do the CPU-gather milliseconds go on this host? randint, index_select, page size, threads.

Run on the GPU host: python3 scripts/device/probe_cpu_gather.py  (prints a table; no files).
"""

import mmap
import time

import torch

ROWS, WIDTH, S = 2**20, 930, 32768


def best_ms(fn, n=15):
    times = []
    for _ in range(n + 3):
        t = time.perf_counter_ns()
        fn()
        times.append((time.perf_counter_ns() - t) / 1e6)
    times = sorted(times[3:])
    return times[0], times[len(times) // 2]


def table(hugepages: bool) -> torch.Tensor:
    nbytes = ROWS * WIDTH * 4
    buf = mmap.mmap(-1, nbytes, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    if hugepages:
        buf.madvise(mmap.MADV_HUGEPAGE)
    t = torch.frombuffer(buf, dtype=torch.float32).view(ROWS, WIDTH)
    t.fill_(1.5)
    return t


print(open("/sys/kernel/mm/transparent_hugepage/enabled").read().strip(),
      open("/sys/kernel/mm/transparent_hugepage/defrag").read().strip())
gen = torch.Generator().manual_seed(0)
idx = torch.empty(S, dtype=torch.int64)
out = torch.empty((S, WIDTH), pin_memory=True)
out.fill_(0)
for threads in (1, 16):
    torch.set_num_threads(threads)
    print(f"randint S={S} threads={threads}: best/median ms", best_ms(lambda: torch.randint(ROWS, (S,), generator=gen, out=idx)))
for huge in (False, True):
    t0 = time.perf_counter()
    tab = table(huge)
    fill_s = time.perf_counter() - t0
    ahp = [l for l in open("/proc/meminfo") if l.startswith("AnonHugePages")]
    for threads in (8, 16):
        torch.set_num_threads(threads)
        torch.randint(ROWS, (S,), generator=gen, out=idx)
        sel = best_ms(lambda: torch.index_select(tab, 0, idx, out=out))
        sidx, _ = torch.sort(idx)
        sel_sorted = best_ms(lambda: torch.index_select(tab, 0, sidx, out=out))
        print(f"hugepages={huge} fill {fill_s:.1f}s {ahp[0].strip()} threads={threads}: "
              f"index_select {sel} sorted-idx {sel_sorted}")
    del tab
try:
    import numba

    @numba.njit(parallel=True, cache=False)
    def gather(tab, idx, out):
        for i in numba.prange(idx.shape[0]):
            out[i, :] = tab[idx[i], :]

    tab = table(True).numpy()
    o, ix = out.numpy(), idx.numpy()
    gather(tab, ix, o)
    for threads in (8, 16):
        numba.set_num_threads(threads)
        print(f"numba prange gather hugepages threads={threads}", best_ms(lambda: gather(tab, ix, o)))
except Exception as exc:  # noqa: BLE001
    print("numba probe failed:", exc)
