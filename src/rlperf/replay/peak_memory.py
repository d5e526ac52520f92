"""Peak host and device memory over one placement's life (set up, verify, time), for the JSON and asv.

Host: the process's resident set now and its high-water mark (`ru_maxrss`, for the whole process, so
a run of several cases reports the largest so far; asv runs one point per process, where it is the
point's own peak). Device: `torch.cuda.max_memory_allocated` since this object reset it.
"""

from __future__ import annotations

import resource

import psutil
import torch


class PeakMemory:
    def __init__(self, device: torch.device | None):
        self.device = device
        if device is not None:
            torch.cuda.reset_peak_memory_stats(device)

    def read(self) -> dict[str, int]:
        rss = int(psutil.Process().memory_info().rss)
        # the kernel's high-water mark is synced lazily and can trail the current RSS by a few pages
        peak = max(rss, int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024)
        out = {"host_rss_bytes": rss, "host_peak_rss_bytes": peak}
        out["device_peak_bytes"] = int(torch.cuda.max_memory_allocated(self.device)) if self.device is not None else 0
        return out


__all__ = ["PeakMemory"]
