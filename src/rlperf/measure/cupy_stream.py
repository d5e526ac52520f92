"""A CuPy view of a torch CUDA stream, so CuPy launches queue behind torch's work on that stream.

One view per stream, cached: building it costs more host time than a launch, and the host cost per draw is the
fused replay kernels' limit at 2^20 rows. It lives here, low, because the replay kernels and the SM copy of the
ceilings both launch through it.
"""

from __future__ import annotations

import functools
import warnings


def cupy_stream(torch_stream):
    """The cached CuPy `ExternalStream` of `torch_stream` (use it as a context manager around a launch)."""
    return _external_stream(torch_stream.cuda_stream, torch_stream.device.index or 0)


@functools.lru_cache(maxsize=64)
def _external_stream(handle: int, device: int):
    import cupy

    with warnings.catch_warnings():  # CuPy 14 deprecates ExternalStream in favour of a protocol torch may lack
        warnings.simplefilter("ignore", DeprecationWarning)
        return cupy.cuda.ExternalStream(handle, device)
