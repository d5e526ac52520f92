"""Experimental CPU row gathers against `torch.index_select` (issue 23 section 3): streaming stores, prefetch.

Why: the `host` placement's CPU sample gathers 32,768 random 3,720 B rows (116 MiB) from a 3.6 GiB table
into staging. The staging is larger than any LLC, so each ordinary store first reads its line for
ownership (about +50 % memory traffic on the write side); a non-temporal (streaming) store writes the line
without reading it. And each random row starts with a TLB and DRAM miss that a prefetch issued a few rows
ahead could hide. These kernels test both ideas on the same table, index and staging as the reference's
call; `docs/replay-host-vs-reference.md` has what was measured.

Variants (`VARIANTS`), each a Numba `prange` over one contiguous block of output rows per thread:

- `plain`: an ordinary row copy (LLVM turns the byte loop into `memcpy`-like vector code);
- `plain-prefetch`: `plain` plus a prefetch (`prefetcht0`) of every 64 B line of the row `prefetch_rows`
  ahead in the thread's block (default `PREFETCH_ROWS`);
- `stream`: 16-byte non-temporal stores (`movntdq`), the unaligned 8 B head or tail of a row with an 8-byte
  non-temporal store (`movnti`): 3,720 B is not a multiple of 16, so every other staging row starts 8 B
  off a 16 B boundary. Each thread ends its block with `sfence`, so its streaming stores are visible before
  the parallel region returns;
- `stream-prefetch`: `stream` plus the prefetch;
- `stream-line`, `stream-line-prefetch`: the same with one 64 B streaming store per whole cache line (a zmm
  store: AVX-512), the row's partial lines 8 B at a time: does the store width matter? (A factor of the
  explanation, not in the brief's list);
- `stream-x4`, `stream-x4-prefetch`: whole lines as four 16 B streaming stores issued back to back after the
  line's four loads (no AVX-512 needed): is it the store's width or the loads between a line's stores?

How the stores are made: Numba has no streaming-store API, so `numba.extending.intrinsic` emits LLVM IR
stores carrying `!nontemporal !{i32 1}` metadata, and `llvm.prefetch` / `llvm.x86.sse.sfence` calls.
LLVM may legally drop the hint (it is a hint), so `check_variant` reads the compiled machine code and
raises `GatherUnavailable` if the instructions a variant promises are not there; nothing falls back
silently to another variant. x86-64 only.
"""

from __future__ import annotations

import functools
import platform
import re

import numpy as np

PREFETCH_ROWS = 4  # how many rows ahead the prefetching variants prefetch (each row: every 64 B line)
LINE = 64
VARIANTS = ("plain", "plain-prefetch", "stream", "stream-prefetch", "stream-line", "stream-line-prefetch",
            "stream-x4", "stream-x4-prefetch")
_STORE = {"plain": 0, "stream": 16, "stream-line": 64, "stream-x4": -64}  # the kernel of each variant (its name less -prefetch)
# The instructions each variant's machine code must contain: a name and its pattern in the AT&T assembly
# LLVM prints. A 16 B streaming store may come out as (v)movntdq, (v)movntps or (v)movntpd on an xmm register
# (the same store; LLVM picks the domain).
_OPS = {"16 B streaming store": r"\bv?movnt(dq|ps|pd)\s+%xmm", "8 B streaming store": r"\bmovnti",
        "64 B streaming store": r"\bvmovnt(dq|ps|pd)\s+%zmm",
        "sfence": r"\bsfence\b", "prefetch": r"\bprefetcht0\b"}
REQUIRED = {"plain": (), "plain-prefetch": ("prefetch",),
            "stream": ("16 B streaming store", "8 B streaming store", "sfence"),
            "stream-prefetch": ("16 B streaming store", "8 B streaming store", "sfence", "prefetch"),
            "stream-line": ("64 B streaming store", "8 B streaming store", "sfence"),
            "stream-line-prefetch": ("64 B streaming store", "8 B streaming store", "sfence", "prefetch"),
            "stream-x4": ("16 B streaming store", "8 B streaming store", "sfence"),
            "stream-x4-prefetch": ("16 B streaming store", "8 B streaming store", "sfence", "prefetch")}


class GatherUnavailable(RuntimeError):
    """A variant cannot be built as promised on this machine (wrong architecture, or the compiled code
    lacks its streaming-store or prefetch instructions)."""


@functools.lru_cache(maxsize=1)
def _kernels() -> dict:
    """Compile lazily: importing this module costs nothing until a gather is asked for."""
    from llvmlite import ir
    from numba import njit, prange, types
    from numba.core import cgutils
    from numba.extending import intrinsic

    i8p = ir.IntType(8).as_pointer()

    def _nontemporal(builder, store):
        store.set_metadata("nontemporal", builder.module.add_metadata([ir.Constant(ir.IntType(32), 1)]))

    def _stream_copy(lanes: int, align: int, doc: str):
        """An intrinsic copying `8 * lanes` B from `src` (any alignment) to `dst` (`align` B aligned) with one
        streaming store of that width."""
        def stream(typingctx, dst, src):
            def codegen(context, builder, sig, args):
                vec = ir.VectorType(ir.IntType(64), lanes)
                val = builder.load(builder.inttoptr(args[1], vec.as_pointer()), align=1)
                _nontemporal(builder, builder.store(val, builder.inttoptr(args[0], vec.as_pointer()), align=align))
                return context.get_dummy_value()
            return types.void(types.intp, types.intp), codegen
        stream.__doc__ = doc
        return intrinsic(stream)

    stream16 = _stream_copy(2, 16, "Copy 16 B to a 16 B aligned `dst` with a streaming store.")
    stream64 = _stream_copy(8, 64, "Copy 64 B (one cache line) to a 64 B aligned `dst` with one streaming store: "
                                   "a zmm store where AVX-512 is enabled; LLVM splits it into narrower ones "
                                   "elsewhere (`check_variant` tells).")

    @intrinsic
    def stream16x4(typingctx, dst, src):
        """Copy 64 B (one cache line, `dst` 64 B aligned): four 16 B loads first, then four 16 B streaming
        stores back to back, so no load falls between the stores that fill one line."""
        def codegen(context, builder, sig, args):
            vec, i64 = ir.VectorType(ir.IntType(64), 2), ir.IntType(64)

            def at(base, k):
                return builder.inttoptr(builder.add(base, i64(16 * k)), vec.as_pointer())

            vals = [builder.load(at(args[1], k), align=1) for k in range(4)]
            for k in range(4):
                _nontemporal(builder, builder.store(vals[k], at(args[0], k), align=16))
            return context.get_dummy_value()
        return types.void(types.intp, types.intp), codegen

    @intrinsic
    def stream8(typingctx, dst, src):
        """Copy 8 B from `src` to `dst` (8 B aligned) with a streaming store (`movnti`)."""
        def codegen(context, builder, sig, args):
            i64 = ir.IntType(64)
            val = builder.load(builder.inttoptr(args[1], i64.as_pointer()), align=1)
            _nontemporal(builder, builder.store(val, builder.inttoptr(args[0], i64.as_pointer()), align=8))
            return context.get_dummy_value()
        return types.void(types.intp, types.intp), codegen

    @intrinsic
    def prefetch(typingctx, addr):
        """`llvm.prefetch(addr, read, locality 3, data)`: prefetcht0."""
        def codegen(context, builder, sig, args):
            i32 = ir.IntType(32)
            fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]),
                                                "llvm.prefetch.p0")
            builder.call(fn, [builder.inttoptr(args[0], i8p), i32(0), i32(3), i32(1)])
            return context.get_dummy_value()
        return types.void(types.intp), codegen

    @intrinsic
    def sfence(typingctx):
        def codegen(context, builder, sig, args):
            fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), []),
                                                "llvm.x86.sse.sfence")
            builder.call(fn, [])
            return context.get_dummy_value()
        return types.void(), codegen

    def make(store: int):
        """`store`: 0 ordinary copies; 16: 16 B streaming stores; 64: one 64 B streaming store a whole line;
        -64: a whole line as four grouped 16 B streaming stores (`stream16x4`)."""
        align = 64 if store in (64, -64) else max(store, 1)
        @njit(parallel=True, nogil=True, cache=False)
        def gather(table, idx, out, blocks, ahead):
            n, width = idx.shape[0], table.shape[1]
            tbase, obase = table.ctypes.data, out.ctypes.data
            per = (n + blocks - 1) // blocks
            for b in prange(blocks):
                lo = b * per
                hi = min(n, lo + per)
                for r in range(lo, hi):
                    if ahead > 0 and r + ahead < hi:
                        nxt = tbase + idx[r + ahead] * width
                        for off in range(0, width, LINE):
                            prefetch(nxt + off)
                    if store == 0:
                        row = idx[r]
                        for j in range(width):
                            out[r, j] = table[row, j]
                        continue
                    src = tbase + idx[r] * width
                    dst = obase + r * width
                    end = dst + width
                    while dst % align != 0 and dst < end:  # the head, 8 B at a time up to the boundary
                        stream8(dst, src)
                        dst += 8
                        src += 8
                    if store == 64:
                        while dst + 64 <= end:
                            stream64(dst, src)
                            dst += 64
                            src += 64
                    elif store == -64:
                        while dst + 64 <= end:
                            stream16x4(dst, src)
                            dst += 64
                            src += 64
                    else:
                        while dst + 16 <= end:
                            stream16(dst, src)
                            dst += 16
                            src += 16
                    while dst < end:  # the tail
                        stream8(dst, src)
                        dst += 8
                        src += 8
                if store != 0:
                    sfence()
        return gather

    return {0: make(0), 16: make(16), 64: make(64), -64: make(-64)}


def _as_bytes(t) -> np.ndarray:
    """A `(rows, row_bytes)` uint8 view of a contiguous 2-D CPU tensor or array, sharing its memory."""
    a = t.numpy() if hasattr(t, "numpy") else t
    if a.ndim != 2 or not a.flags.c_contiguous:
        raise ValueError(f"need a C-contiguous 2-D table and staging, got shape {a.shape}")
    return a.view(np.uint8).reshape(a.shape[0], -1)


def _check_args(variant: str, table, idx, out) -> None:
    if variant not in VARIANTS:
        raise ValueError(f"unknown gather variant {variant!r}; valid: {', '.join(VARIANTS)}")
    if platform.machine() not in ("x86_64", "AMD64"):
        raise GatherUnavailable(f"gather variant {variant!r} needs x86-64; this is {platform.machine()}")
    if table.dtype != out.dtype or table.shape[1] != out.shape[1] or out.shape[0] != idx.shape[0]:
        raise ValueError(f"out {tuple(out.shape)} {out.dtype} does not fit {idx.shape[0]} rows of table "
                         f"{tuple(table.shape)} {table.dtype}")
    if (table.shape[1] * table.element_size()) % 8:
        raise ValueError(f"rows of {table.shape[1] * table.element_size()} B: the streaming gathers need "
                         "a multiple of 8 B")


def gather(variant: str, table, idx, out, *, threads: int | None = None, prefetch_rows: int = PREFETCH_ROWS):
    """`out[r] = table[idx[r]]` for torch CPU tensors (`idx` int64), with the kernel `variant`.

    Indices are not bounds-checked (as a raw `memcpy` would not be): callers draw them in range. `threads`:
    Numba threads for this call (default: Numba's current count); one block of rows per thread.
    `prefetch_rows`: how far ahead the `-prefetch` variants prefetch (ignored by the others)."""
    import numba

    _check_args(variant, table, idx, out)
    if variant.endswith("-prefetch") and prefetch_rows < 1:
        raise ValueError(f"prefetch_rows must be >= 1 for {variant!r}, got {prefetch_rows}")
    check_variant(variant)
    if threads is not None:
        numba.set_num_threads(threads)
    ahead = prefetch_rows if variant.endswith("-prefetch") else 0
    _kernels()[_STORE[variant.removesuffix("-prefetch")]](_as_bytes(table), idx.numpy(), _as_bytes(out),
                                             numba.get_num_threads(), ahead)
    return out


@functools.lru_cache(maxsize=None)
def check_variant(variant: str) -> str:
    """Compile `variant` for the byte-table signature and return its machine code; raise `GatherUnavailable`
    if the instructions it promises (`REQUIRED`) are missing."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown gather variant {variant!r}; valid: {', '.join(VARIANTS)}")
    if platform.machine() not in ("x86_64", "AMD64"):
        raise GatherUnavailable(f"gather variant {variant!r} needs x86-64; this is {platform.machine()}")
    from numba import types

    kernel = _kernels()[_STORE[variant.removesuffix("-prefetch")]]
    b2 = types.Array(types.uint8, 2, "C")
    sig = (b2, types.Array(types.int64, 1, "C"), b2, types.intp, types.intp)
    kernel.compile(sig)
    asm = "\n".join(kernel.inspect_asm().values())
    missing = [op for op in REQUIRED[variant] if not re.search(_OPS[op], asm)]
    if missing:
        raise GatherUnavailable(f"gather variant {variant!r}: the compiled code has no {', '.join(missing)} on this "
                                "machine (a 64 B store needs AVX-512; LLVM may also drop a streaming hint), so "
                                "this variant is not what it says")
    return asm


__all__ = ["PREFETCH_ROWS", "REQUIRED", "VARIANTS", "GatherUnavailable", "check_variant", "gather"]
