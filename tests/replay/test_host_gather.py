"""The experimental host gathers (issue 23 section 3): byte-for-byte equal to torch.index_select on small
tables, their streaming stores and prefetches really in the machine code, and the probe's record and table."""

from __future__ import annotations

import json
import platform
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from rlperf.replay import gather_probe, host_gather
from rlperf.replay.host_gather import VARIANTS, GatherUnavailable

ROOT = Path(__file__).resolve().parents[2]
x86 = pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="the kernels are x86-64 only")


def _avx512() -> bool:
    try:
        return any(line.startswith("flags") and " avx512f" in line for line in open("/proc/cpuinfo"))
    except OSError:
        return False


def _buildable(variant: str) -> bool:
    """The 64 B streaming store needs AVX-512; without it the variant must refuse, not fall back."""
    if variant.startswith("stream-line") and not _avx512():
        with pytest.raises(GatherUnavailable, match="64 B streaming store"):
            host_gather.check_variant(variant)
        return False
    return True


def _table(rows: int, width: int, dtype=torch.float32) -> torch.Tensor:
    # distinct bytes everywhere (random bits, not a pattern a wrong row could also hold)
    g = torch.Generator().manual_seed(rows * 31 + width)
    raw = torch.randint(-2**31, 2**31 - 1, (rows, width * torch.empty((), dtype=dtype).element_size() // 4),
                        generator=g, dtype=torch.int32)
    return raw.view(dtype)


@x86
@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("width", [930, 928, 6])  # 3,720 B (odd rows 8 B off 16), 3,712 B (line-aligned), 24 B
@pytest.mark.parametrize("threads", [1, "all"])  # "all": Numba's pool (the cores it may use here)
def test_every_variant_is_byte_for_byte_index_select(variant, width, threads):
    import numba

    if not _buildable(variant):
        return
    threads = numba.config.NUMBA_NUM_THREADS if threads == "all" else threads
    table = _table(517, width)
    g = torch.Generator().manual_seed(width + threads)
    for n in (1, 2, 3, 401):
        idx = torch.randint(517, (n,), generator=g)
        idx[-1] = idx[0]  # a repeated row
        want = torch.index_select(table, 0, idx)
        out = torch.full_like(want, float("nan"))
        for ahead in (1, 3, 1000):  # a prefetch distance past the end of every block is skipped, not read
            out.fill_(float("nan"))
            host_gather.gather(variant, table, idx, out, threads=threads, prefetch_rows=ahead)
            assert torch.equal(out.view(torch.int32), want.view(torch.int32)), (variant, n, ahead)


@x86
@pytest.mark.parametrize("variant", VARIANTS)
def test_other_dtypes_are_copied_as_bytes(variant):
    if not _buildable(variant):
        return
    table = _table(64, 4, dtype=torch.int64)  # 32 B rows
    idx = torch.tensor([63, 0, 5, 5, 17])
    out = torch.zeros((5, 4), dtype=torch.int64)
    host_gather.gather(variant, table, idx, out)
    assert torch.equal(out, table[idx])


@x86
def test_the_machine_code_holds_what_each_variant_promises():
    import re

    for variant in filter(_buildable, VARIANTS):
        asm = host_gather.check_variant(variant)
        for op in host_gather.REQUIRED[variant]:
            assert re.search(host_gather._OPS[op], asm), (variant, op)
    assert host_gather.REQUIRED["stream"] and host_gather.REQUIRED["stream-prefetch"]


@x86
def test_a_variant_whose_instructions_are_missing_is_refused_not_run(monkeypatch):
    monkeypatch.setitem(host_gather._OPS, "16 B streaming store", r"\bno_such_instruction\b")
    host_gather.check_variant.cache_clear()
    try:
        with pytest.raises(GatherUnavailable, match="16 B streaming store"):
            host_gather.gather("stream", _table(8, 930), torch.tensor([1, 2]), torch.empty((2, 930)))
        host_gather.check_variant("plain")  # the plain copy promises nothing and still builds
    finally:
        host_gather.check_variant.cache_clear()


def test_bad_arguments_name_the_valid_choices():
    t, idx = _table(8, 930), torch.tensor([1, 2])
    with pytest.raises(ValueError, match="valid: plain, plain-prefetch, stream, stream-prefetch, stream-line, "):
        host_gather.gather("fast", t, idx, torch.empty((2, 930)))
    with pytest.raises(ValueError, match="does not fit"):
        host_gather.gather("plain", t, idx, torch.empty((3, 930)))
    with pytest.raises(ValueError, match="multiple of 8 B"):
        host_gather.gather("stream", _table(8, 3), idx, torch.empty((2, 3)))
    with pytest.raises(ValueError, match="prefetch_rows"):
        host_gather.gather("plain-prefetch", t, idx, torch.empty((2, 930)), prefetch_rows=0)


@x86
def test_the_probe_records_paired_rounds_and_tabulates_every_method(monkeypatch):
    rec = gather_probe.probe(capacity_exponent=10, sample_rows=300, threads=1, rounds=3, warmup=1, repeat=2,
                             variants=["plain", "stream"])
    assert rec["parity"] == {"index_select": True, "plain": True, "stream": True}
    methods = {t["method"] for t in rec["timings"]}
    assert methods == {"index_select", "contiguous-copy", "plain", "stream"}
    assert len(rec["timings"]) == 3 * 4 and all(len(t["ms"]) == 2 for t in rec["timings"])
    # the order rotates, so no method is always first
    firsts = {t["method"] for t in rec["timings"] if t["position"] == 0}
    assert len(firsts) == 3
    json.dumps(rec)
    seq = gather_probe.probe(capacity_exponent=10, sample_rows=300, threads=1, rounds=1, warmup=0, repeat=1,
                             variants=["plain"], index="sequential", prefetch_rows=2)
    other = gather_probe.probe(capacity_exponent=10, sample_rows=300, threads=1, rounds=1, warmup=0, repeat=1,
                               variants=["plain"])  # same condition as rec, other methods: its own table
    text = gather_probe.summarize([rec, seq, other])
    assert text.count("random index, prefetch 4 rows ahead: 1 fresh processes") == 2
    assert "random index, prefetch 4 rows ahead: 1 fresh processes" in text
    assert "sequential index, prefetch 2 rows ahead" in text
    for name in ("index_select", "contiguous-copy (not a gather: floor)", "plain", "stream"):
        assert f"| {name} |" in text
    # a variant not built as promised is recorded and left out, never replaced by another
    real = host_gather.check_variant

    def refuse(v):
        if v == "stream":
            raise GatherUnavailable("no streaming store here")
        return real(v)

    monkeypatch.setattr(host_gather, "check_variant", refuse)
    part = gather_probe.probe(capacity_exponent=10, sample_rows=64, threads=1, rounds=1, warmup=0, repeat=1,
                              variants=["plain", "stream"])
    assert part["unavailable"] == {"stream": "no streaming store here"}
    assert {t["method"] for t in part["timings"]} == {"index_select", "contiguous-copy", "plain"}
    assert "Not built on this machine (left out): stream: no streaming store here" in gather_probe.summarize([part])
    with pytest.raises(ValueError, match="smaller than the 300-row batch"):
        gather_probe.probe(capacity_exponent=8, sample_rows=300, threads=1)
    with pytest.raises(ValueError, match="valid: random, sequential, random-per-call"):
        gather_probe.probe(capacity_exponent=10, sample_rows=8, threads=1, index="shuffled")


@x86
def test_per_call_draws_happen_inside_each_timed_call_and_every_method_of_a_round_gets_the_same(monkeypatch):
    seen: dict[str, list[int]] = {"index_select": [], "plain": []}
    buffers = set()
    real_select, real_gather = torch.index_select, host_gather.gather

    def select(table, dim, idx, out=None):
        seen["index_select"].append(int(idx.sum()))
        return real_select(table, dim, idx, out=out)

    def gather(variant, table, idx, out, **kw):
        seen[variant].append(int(idx.sum()))
        buffers.add(idx.data_ptr())
        return real_gather(variant, table, idx, out, **kw)

    monkeypatch.setattr(torch, "index_select", select)
    monkeypatch.setattr(host_gather, "gather", gather)
    rec = gather_probe.probe(capacity_exponent=10, sample_rows=300, threads=1, rounds=2, warmup=1, repeat=2,
                             variants=["plain"], index="random-per-call")
    timed = {name: v[-2 * 3:] for name, v in seen.items()}  # the parity check's call came first
    assert timed["plain"] == timed["index_select"] and len(set(timed["plain"][:3])) == 3  # a new vector a call
    assert timed["plain"][:3] != timed["plain"][3:]  # and new ones the next round
    assert len(buffers) == 2  # the parity check's vector, then one buffer drawn into call by call, as a placement's
    assert rec["parity"] == {"index_select": True, "plain": True} and rec["index"] == "random-per-call"
    assert "random-per-call index" in gather_probe.summarize([rec])


def test_the_script_refuses_a_bad_variant_with_exit_2_and_writes_nothing(tmp_path):
    out = tmp_path / "rec.json"
    p = subprocess.run([sys.executable, str(ROOT / "scripts" / "probe_host_gather_streaming.py"), "--threads", "1",
                        "--variants", "plain,fast", "--out", str(out)], capture_output=True, text=True)
    assert p.returncode == 2 and "valid: plain, plain-prefetch, stream, stream-prefetch, stream-line" in p.stderr
    assert not out.exists()
    p = subprocess.run([sys.executable, str(ROOT / "scripts" / "probe_host_gather_streaming.py"), "--threads", "1",
                        "--capacity-exponent", "14", "--out", str(out)], capture_output=True, text=True)
    assert p.returncode == 2 and "must hold the 32,768-row batch (>= 15)" in p.stderr
    assert not out.exists()


@x86
def test_the_h2d_table_pairs_gather_plus_copy_against_index_select():
    """`h2d` records (CUDA) get a second table: the copy right after a gather, the copy again, and the
    gather+copy ratio to index_select's; built here from a CPU record given copy times by hand."""
    rec = gather_probe.probe(capacity_exponent=10, sample_rows=300, threads=1, rounds=2, warmup=0, repeat=2,
                             variants=["plain"])
    after = {"index_select": 3.0, "contiguous-copy": 2.0, "plain": 1.0}
    for t in rec["timings"]:
        t.update(h2d_ms=[after[t["method"]]] * 2, h2d_again_ms=[2.0] * 2, median_h2d_ms=after[t["method"]],
                 median_h2d_again_ms=2.0, median_total_ms=t["median_ms"] + after[t["method"]])
    assert "Gather then H2D" not in gather_probe.summarize([rec])  # only for records that timed the copy
    rec["h2d"] = True
    text = gather_probe.summarize([rec])
    row = next(line for line in text.splitlines() if line.startswith("| plain |") and "| 1.00 | 2.00 |" in line)
    ratio = float(row.split("|")[6].split()[0])
    assert ratio < 1  # plain's copy is 2 ms shorter than index_select's, far more than any gather difference here
    assert "| 3.00 | 2.00 |" in next(line for line in text.splitlines()
                                    if line.startswith("| index_select |") and "2.00 |" in line)


def test_the_h2d_probe_needs_cuda_and_says_so(tmp_path):
    if torch.cuda.is_available():
        pytest.skip("this checks the refusal on a machine without CUDA")
    with pytest.raises(ValueError, match="no CUDA device is visible"):
        gather_probe.probe(capacity_exponent=10, sample_rows=64, threads=1, h2d=True)
    out = tmp_path / "rec.json"
    p = subprocess.run([sys.executable, str(ROOT / "scripts" / "probe_host_gather_streaming.py"), "--threads", "1",
                        "--h2d", "--out", str(out)], capture_output=True, text=True)
    assert p.returncode == 2 and "--h2d times the copy to the GPU: no CUDA device is visible" in p.stderr
    assert not out.exists()


@pytest.mark.gpu
def test_the_h2d_probe_times_the_copy_after_every_gather_on_a_gpu():
    if not torch.cuda.is_available():
        pytest.skip("needs CUDA")
    rec = gather_probe.probe(capacity_exponent=16, sample_rows=4096, threads=2, rounds=2, warmup=1, repeat=2,
                             variants=["plain"], h2d=True)
    assert rec["h2d"] and rec["staging"]["pinned"]
    assert all(len(t["h2d_ms"]) == len(t["h2d_again_ms"]) == 2 and t["median_h2d_ms"] > 0 for t in rec["timings"])
    assert "Gather then H2D" in gather_probe.summarize([rec])
