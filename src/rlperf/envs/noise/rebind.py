"""Recompile a kernel's Python body with some of its globals replaced (in-kernel noise, issue 9 section 3).

Why: the in-kernel-noise variants must run the very body of the default kernels (one source for the hot
path, so an optimisation there is measured in both), changing only the helper that supplies the noise.
The copy compiles with the kernel's own Numba options but no cache: the cache is keyed on the default
kernel's file and would not see a rebinding made elsewhere.
"""

from __future__ import annotations

import types

from numba import njit


def rebound(kernel, name: str, **names):
    """`kernel`'s Python body compiled again as `name` with the globals in `names` replaced."""
    f = kernel.py_func
    fn = types.FunctionType(f.__code__, {**f.__globals__, **names}, name, f.__defaults__, f.__closure__)
    fn.__qualname__ = name
    options = {k: v for k, v in kernel.targetoptions.items() if k != "nopython"}  # njit implies it
    return njit(**{**options, "cache": False})(fn)
