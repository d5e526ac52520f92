"""Transfers, and every registered combination: written through the placement's own storage (wraparound,
terminal patch), sampled and moved by its transfer, every row equal to the written row.

Transfers that need no CUDA (h2d, h2d-pageable, pipelined, h2d-numba and none fall back to the CPU learner) run
here; uva and cache, and every combination on a real device, carry the `gpu` marker.
"""

import pytest
import torch

from rlperf.replay.placements import PLACEMENTS, valid_combinations
from rlperf.replay.placements.specs import TRANSFERS
from rlperf.replay.run import learner_device
from tests.replay.replay_steps import ENVS, TINY, assert_batch_matches, expected_rows, step

CAP, STEPS, EVERY, BATCH = 64, 20, 8, 96  # 80 rows into 64: wraps; terminal rows within the table's slots
CPU_TRANSFERS = ("h2d", "h2d-pageable", "pipelined", "none", "h2d-numba")


def _integrity(spec) -> None:
    placement = spec.load()(spec=spec, layout=TINY, capacity_rows=CAP, sample_rows=BATCH, device=learner_device(),
                            threads=1, seed=11, step_rows=ENVS, prefill=False)
    placement.setup()
    for t in range(STEPS):
        placement.storage.add(**step(t, terminal_every=EVERY))
    if getattr(placement, "cache", None) is not None:  # the cache holds what the host had at setup
        pytest.skip("the GPU cache holds the rows present at setup and refreshes them in blocks; "
                    "test_replay_cases verifies gpu-cache on a pattern-filled table")
    rows = placement.sample().cpu()
    idx = placement.last_indices().cpu()
    batch = placement.storage.decode(rows)
    assert_batch_matches(batch, idx, expected_rows(STEPS, CAP, terminal_every=EVERY), placement.layout)


def _cpu_ok(spec) -> bool:
    return spec.transfer in CPU_TRANSFERS and spec.sampler == "torch" or spec.transfer == "none"


CPU_SPECS = [s for s in valid_combinations() if _cpu_ok(s)]


def _id(spec) -> str:
    """Not the bare name: conftest reads a `gpu` keyword (a test id of exactly "gpu") as the GPU marker."""
    return f"{spec.name}[{spec.storage}]"


@pytest.mark.parametrize("spec", CPU_SPECS, ids=_id)
def test_every_cpu_runnable_combination_returns_the_rows_it_wrote(spec):
    _integrity(spec)


@pytest.mark.gpu
@pytest.mark.parametrize("spec", valid_combinations(), ids=_id)
def test_every_combination_returns_the_rows_it_wrote_on_a_gpu(spec):
    if spec.unavailable_reason():
        pytest.skip(spec.unavailable_reason())
    if spec.parts.peer:
        pytest.skip(f"{spec.parts.peer} owns its storage and is written through its own API; "
                    "tests/replay/test_torchrl_peer.py verifies its rows, wraparound included")
    _integrity(spec)


def test_every_transfer_is_covered_by_a_named_placement():
    assert {s.transfer for s in PLACEMENTS.values()} == set(TRANSFERS)
    assert {t for t, parts in TRANSFERS.items() if t not in CPU_TRANSFERS and not parts.peer} == {"uva", "cache"}


@pytest.mark.parametrize("name", ["host", "host-pageable", "host-pipelined", "host-bf16", "host-compact",
                                  "gpu", "gpu-compact"], ids=lambda n: f"named-{n}")
def test_named_placements_verify_a_pattern_filled_table_on_the_cpu(name):
    from rlperf.replay.cases import ReplayCase
    from rlperf.replay.build import build_placement

    case = ReplayCase("g1_motion_tracking", "motrix", name, 2**13)
    p = build_placement(case.spec, case.workload, case.capacity_rows, device=learner_device(), threads=1, seed=2)
    p.sample_rows = 512
    p.setup()
    p.verify()
    assert p.storage.size == 2**13 and p.storage.ptr == 2**13  # prefilled through the storage's writer
