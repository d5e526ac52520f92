"""Why does uva-bf16 read at 40 GB/s when pinned H2D runs at 55, and at 1.35 ms in one process and 1.54 in the
next? One process; factors varied one at a time in interleaved rounds (issue 23, uva-bf16 <= 1.4 ms).

The zero-copy gather (`gather_int4`, one warp per row) reads 32,768 random rows of a pinned host table over PCIe.
Factors:

- **row stride**: 1,872 B (bf16-slim, what uva-bf16 stores: 16-byte aligned, a row starts anywhere in a
  128-byte line), 1,920 B (every row whole 128-byte lines) and 2,048 B; the padded strides move more bytes;
- **host memory**: `pinned` (torch pin_memory: cudaHostAlloc, the placement's), `registered-huge` (pageable,
  2 MiB transparent huge pages asked before the first write, then cudaHostRegister), `registered-small` (the same
  with 4 KiB pages): whether the GPU's or the IOMMU's translation of random host rows costs the time.

Each (stride, memory) table holds 2^20 rows. Timing: 10 gathers a window behind a GPU spin (device time only),
each from a fresh device randint of row indices, as the placement draws them; the batch is checked against a
host gather once. Also the real `uva-bf16` placement's `sample()` wall time (what the report quotes). One JSON
line per (variant, round); markdown on stdout.

    python3 scripts/device/probe_uva_layout.py --out uva.jsonl > uva.md
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

ROWS, BATCH = 2**20, 32_768
STRIDES = (1872, 1920, 2048)
MEMORY = ("pinned", "registered-huge", "registered-small")


def host_table(nbytes: int, memory: str):
    """A written host table of `nbytes` in `memory`'s kind, and a release call (unregister)."""
    import torch

    from rlperf.replay.huge_pages import advise_huge_pages, tensor_backing

    if memory == "pinned":
        t = torch.empty(nbytes, dtype=torch.uint8, pin_memory=True)
        t.fill_(0)
        return t, (lambda: None), {}
    t = torch.empty(nbytes + (2 << 20), dtype=torch.uint8)
    off = (-t.data_ptr()) % (2 << 20)
    t = t[off:off + nbytes]  # 2 MiB aligned, so huge pages can back all of it
    advise_huge_pages(t.data_ptr(), nbytes, huge=(memory == "registered-huge"))
    t.fill_(0)
    backing = tensor_backing(t)
    rt = torch.cuda.cudart()
    err = rt.cudaHostRegister(t.data_ptr(), nbytes, 0)
    if int(err) != 0:
        raise SystemExit(f"cudaHostRegister failed: {err}")
    return t, (lambda: rt.cudaHostUnregister(t.data_ptr())), {"huge_share": backing["huge_share"]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--memory", default=",".join(MEMORY))
    args = ap.parse_args()
    import numpy as np
    import torch

    from rlperf.measure.timing import time_cuda, time_wall
    from rlperf.replay import kernel_probe
    from rlperf.replay.placements.cupy_kernels import launch

    dev = torch.device("cuda", 0)
    stream = torch.cuda.Stream(dev)
    idx = torch.empty(BATCH, dtype=torch.int64, device=dev)
    gen = torch.Generator(device=dev)
    gen.manual_seed(0)
    variants, keep = [], []
    for memory in args.memory.split(","):
        for stride in STRIDES:
            table, release, info = host_table(ROWS * stride, memory)
            table2d = table.view(ROWS, stride)
            table2d[:, :8].copy_(torch.arange(ROWS, dtype=torch.int64).view(-1, 1).view(torch.uint8))
            out = torch.empty(BATCH, stride, dtype=torch.uint8, device=dev)

            def call(table=table, out=out, stride=stride):
                torch.randint(ROWS, (BATCH,), out=idx, generator=gen)
                launch("gather_int4", stream, BATCH, np.uint64(table.data_ptr()), np.uint64(idx.data_ptr()),
                       np.uint64(out.data_ptr()), np.int32(BATCH), np.int32(stride // 16))

            with torch.cuda.stream(stream):
                call()
            stream.synchronize()
            ok = torch.equal(out.cpu(), table2d[idx.cpu()])
            variants.append({"variant": f"{memory} stride={stride}", "memory": memory, "stride": stride,
                             "checked": ok, "useful_bytes": BATCH * 1872, "moved_bytes": BATCH * stride,
                             "call": call, **info})
            keep.append((table, out, release))
    uva = kernel_probe.build("uva-bf16", 20) if "pinned" in args.memory else None
    with open(args.out, "w") as f:
        for r in range(args.rounds):
            for v in variants:
                s = time_cuda(v["call"], warmup=2, repeat=10, stream=stream, inner=10, run_ahead=True)
                rec = {k: x for k, x in v.items() if k != "call"} | {"round": r, "median_ms": statistics.median(s),
                                                                    "min_ms": min(s)}
                f.write(json.dumps(rec) + "\n")
                v.setdefault("medians", []).append(rec["median_ms"])
            if uva is not None:
                s = time_wall(uva.sample, warmup=2, repeat=20, devices=[dev])
                rec = {"variant": "uva-bf16 placement sample() wall", "round": r,
                       "median_ms": statistics.median(s), "min_ms": min(s)}
                f.write(json.dumps(rec) + "\n")
                print(f"<!-- round {r} placement wall {rec['median_ms']:.3f} ms at {time.time():.0f} -->")
    print("| variant | checked | huge share | median ms | useful GB/s | moved GB/s |")
    print("|---|---|---:|---:|---:|---:|")
    for v in variants:
        ms = statistics.median(v["medians"])
        print(f"| {v['variant']} | {v['checked']} | {v.get('huge_share')} | {ms:.3f} | "
              f"{v['useful_bytes'] / ms / 1e6:.1f} | {v['moved_bytes'] / ms / 1e6:.1f} |")
    for table, out, release in keep:
        release()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
