"""Which CPU cores each rank owns: its GPU's NUMA node first, then an equal slice of that node.

On HGX boxes GPUs 0..N/2-1 hang off NUMA node 0 and the rest off node 1 (docs/limits.md
1.2), so ranks are assigned to nodes in blocks; without NUMA information the visible cores are cut
in contiguous slices. Each rank then sets torch threads = its core count in its own process, which
a thread-per-rank harness cannot do (torch.set_num_threads is process-wide).
"""

from __future__ import annotations

import glob
import os
import re


def _parse_cpulist(text: str) -> list[int]:
    cpus = []
    for part in text.strip().split(","):
        if "-" in part:
            lo, hi = part.split("-")
            cpus.extend(range(int(lo), int(hi) + 1))
        elif part:
            cpus.append(int(part))
    return cpus


def numa_nodes(visible: set[int]) -> list[list[int]]:
    """Visible cores grouped by NUMA node (one group when /sys does not say)."""
    nodes = []
    for path in sorted(glob.glob("/sys/devices/system/node/node[0-9]*/cpulist"),
                       key=lambda p: int(re.search(r"node(\d+)", p).group(1))):
        with open(path) as fh:
            cpus = [c for c in _parse_cpulist(fh.read()) if c in visible]
        if cpus:
            nodes.append(cpus)
    return nodes or [sorted(visible)]


def rank_cores(rank: int, world: int, visible: set[int] | None = None) -> tuple[int, list[int]]:
    """(NUMA node index, cores) for `rank`: ranks go to nodes in blocks, then share the node evenly."""
    visible = set(os.sched_getaffinity(0)) if visible is None else visible
    nodes = numa_nodes(visible)
    node = _node_of(rank, world, len(nodes))
    peers = [r for r in range(world) if _node_of(r, world, len(nodes)) == node]
    cores = nodes[node]
    per = max(1, len(cores) // len(peers))
    k = peers.index(rank) % len(cores)
    return node, cores[k * per:(k + 1) * per]


def _node_of(rank: int, world: int, nodes: int) -> int:
    """Blocks of ranks per node: 8 ranks on 2 nodes -> 0,0,0,0,1,1,1,1; 1 rank -> node 0."""
    return rank * nodes // world
