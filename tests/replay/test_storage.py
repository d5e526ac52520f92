"""Storage over every kind and layout: offsets and bytes, writes with wrap and terminal patch, integrity,
next-obs elision identical to the packed rows, and the newest step kept out of sampling."""

import pytest
import torch

from rlperf.replay.layouts import LAYOUTS, layout_table, storage_layout
from rlperf.replay.pairing import PairedStorages
from rlperf.replay.sampler import TorchSampler
from rlperf.replay.storage import STORAGE_KINDS, ReplayStorage, Storage
from rlperf.row_layout import RowLayout
from tests.replay.replay_steps import ENVS, TINY, assert_batch_matches, expected_rows, step

MT = RowLayout(160, 29, 289)
WALK = RowLayout(98, 29, 101)
CAP = 16  # 4 steps of 4 envs: 7 steps wrap the ring


def test_motion_tracking_offsets_follow_the_spec_table():
    off = MT.offsets()
    assert off["obs"] == (0, 160) and off["next_obs"] == (160, 320) and off["actions"] == (320, 349)
    assert off["reward"] == (349, 350) and off["done"] == (350, 351) and off["truncated"] == (351, 352)
    assert off["critic"] == (352, 641) and off["next_critic"] == (641, 930)
    assert MT.width == 930 and MT.row_bytes == 3720


def test_padding_rounds_rows_up_to_16_bytes():
    assert MT.padded(16).stored_width == 932 and MT.padded(16).stored_row_bytes == 3728
    assert WALK.padded(16).stored_width == 432
    assert storage_layout("fp32-padded", MT).stored_row_bytes == 3728
    assert all(storage_layout(n, MT).stored_row_bytes % 16 == 0 for n, v in LAYOUTS.items() if v[4] == 16)


def test_layout_bytes_follow_the_field_dtypes():
    """fp32 930 floats; bf16 obs/critic + fp32 actions + 3 fp32 scalars = 1,924 B (60.1 MiB a batch);
    elided bf16 rows store obs, actions, scalars and critic once (under 1 KB)."""
    rows = {r["layout"]: r for r in layout_table(MT, 32768)}
    assert rows["fp32"]["stored_row_bytes"] == 3720 and rows["fp32"]["batch_mib_per_iteration"] == 116.25
    assert storage_layout("bf16", MT).batch_fields()[-1].stop == 1924
    assert rows["bf16"]["batch_mib_per_iteration"] > 60  # 1,936 B padded: misses the target
    assert rows["bf16-flags"]["batch_mib_per_iteration"] <= 60 and rows["bf16-slim"]["batch_mib_per_iteration"] <= 60
    assert rows["compact"]["stored_row_bytes"] == 976 and rows["compact"]["batch_row_bytes"] == 1872
    assert storage_layout("compact", WALK).stored_row_bytes < 500


@pytest.mark.parametrize("kind", STORAGE_KINDS)
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_every_sampled_row_equals_its_written_row_after_wraparound_and_terminal_patch(kind, layout):
    lay = storage_layout(layout, TINY)
    st = Storage(lay, CAP, kind=kind, step_rows=ENVS, terminal_rows=CAP)
    for t in range(7):
        st.add(**step(t))
    assert (st.ptr, st.size) == (28, CAP)
    idx = TorchSampler(0).sample(st, torch.empty(400, dtype=torch.int64))
    batch = st.decode(st.gather(idx, st.new_batch(400)))
    assert_batch_matches(batch, idx, expected_rows(7, CAP), lay)
    assert len(set(idx.tolist())) == CAP - ENVS  # every sampleable row drawn, none of the newest step
    assert not set(idx.tolist()) & {(24 + e) % CAP for e in range(ENVS)}


@pytest.mark.parametrize("packed, elided", [("fp32-padded", "fp32-elided"), ("bf16-slim", "compact")])
def test_next_obs_elision_gives_the_packed_layouts_batch_for_the_same_indices(packed, elided):
    pair = PairedStorages(TINY, CAP, ENVS, layouts=(packed, elided), terminal_rows=CAP)
    for t in range(9):
        pair.add(**step(t))
    first, count = pair.sampleable()
    idx = (first + torch.arange(count)) % CAP
    a, b = pair.batches(idx)
    for name, x, y in zip(a._fields, a, b):
        assert torch.equal(x, y), name
    assert pair.storages[1].layout.stored_row_bytes < pair.storages[0].layout.stored_row_bytes


def test_the_elided_gather_never_waits_on_the_device(monkeypatch):
    """No nonzero(), item() or tolist() in the gather: each would stall the host on every GPU draw, so the
    host's speed, not the kernels', set the draw's time (docs/replay-bimodality.md)."""
    pair = PairedStorages(TINY, CAP, ENVS, layouts=("bf16-slim", "compact"), terminal_rows=CAP)
    for t in range(9):
        pair.add(**step(t))
    first, count = pair.sampleable()
    idx = (first + torch.arange(count)) % CAP
    want, _ = pair.batches(idx)
    compact = pair.storages[1]

    def stall(*_a, **_k):
        raise AssertionError("host sync in the gather")

    for name in ("nonzero", "item", "tolist"):
        monkeypatch.setattr(torch.Tensor, name, stall)
    monkeypatch.setattr(torch, "nonzero", stall)
    got = compact.decode(compact.gather(idx, compact.new_batch(count)))
    monkeypatch.undo()
    for name, x, y in zip(want._fields, want, got):
        assert torch.equal(x, y), name


def test_paired_storages_return_fp32_and_bf16_batches_of_the_same_transitions():
    pair = PairedStorages(TINY, CAP, ENVS, terminal_rows=CAP)  # fp32 packed and bf16 compact
    for t in range(5):
        pair.add(**step(t))
    idx = torch.tensor([0, 5, 9, 2])
    fp32, bf16 = pair.batches(idx)
    assert torch.equal(fp32.rewards, bf16.rewards)  # reward stays fp32 in every layout
    assert torch.allclose(fp32.obs, bf16.obs, rtol=2**-8) and not torch.equal(fp32.obs, bf16.obs)


def test_the_learner_receives_the_dtype_it_asks_for():
    st = Storage(storage_layout("compact", TINY), CAP, step_rows=ENVS, terminal_rows=CAP)
    for t in range(3):
        st.add(**step(t))
    rows = st.gather(torch.tensor([0, 1]), st.new_batch(2))
    assert st.decode(rows, torch.bfloat16).obs.dtype == torch.bfloat16
    assert st.decode(rows).next_critic.dtype == torch.float32 and st.decode(rows).rewards.shape == (2,)


def test_the_newest_step_is_not_sampleable_until_the_next_one_is_written():
    st = Storage(storage_layout("fp32", TINY), CAP, step_rows=ENVS)
    st.add(**step(0))
    with pytest.raises(RuntimeError, match="newest step"):
        st.sampleable()
    st.add(**step(1))
    assert st.sampleable() == (0, ENVS)


def test_a_full_terminal_table_is_an_error_not_a_wrong_next_obs():
    st = Storage(storage_layout("compact", TINY), CAP, step_rows=ENVS, terminal_rows=1)
    st.add(**step(0))
    with pytest.raises(RuntimeError, match="terminal table full"):
        st.add(**step(3))


def test_overwritten_rows_free_their_terminal_slot_for_new_terminal_rows():
    st = Storage(storage_layout("compact", TINY), CAP, step_rows=ENVS, terminal_rows=1)
    for t in range(5):  # steps 0 and 4 end env 0's episode; step 4 overwrites step 0's rows first
        st.add(**step(t, terminal_every=4))
    assert int(st.slot_of_row[0]) == 0 and int((st.slot_of_row >= 0).sum()) == 1


def test_elision_refuses_partial_steps_and_capacities_that_are_not_whole_steps():
    with pytest.raises(ValueError, match="multiple"):
        Storage(storage_layout("compact", TINY), 18, step_rows=ENVS)
    st = Storage(storage_layout("compact", TINY), CAP, step_rows=ENVS)
    with pytest.raises(ValueError, match="whole steps"):
        st.add(**step(0, envs=2))


def test_the_historical_constructor_still_works():
    st = ReplayStorage(TINY, 20)
    for t in range(3):
        st.add(**{k: v for k, v in step(t).items() if k not in ("terminal_mask", "final_obs", "final_critic")})
    assert (st.ptr, st.size) == (12, 12) and st.table.shape == (20, TINY.width)

    def rewards(seed):
        idx = TorchSampler(seed).sample(st, torch.empty(50, dtype=torch.int64))
        return st.decode(st.gather(idx, st.new_batch(50))).rewards

    assert torch.equal(rewards(7), rewards(7)) and not torch.equal(rewards(7), rewards(8))


def test_contract_violations_are_refused():
    st = Storage(storage_layout("fp32", TINY), 4)
    with pytest.raises(RuntimeError, match="empty"):
        st.sampleable()
    with pytest.raises(ValueError, match="exceeds capacity"):
        st.add(**step(0, envs=8))
    missing = step(0)
    missing["critic"] = None
    with pytest.raises(ValueError, match="critic"):
        st.add(**missing)
    with pytest.raises(ValueError, match="valid: host"):
        Storage(storage_layout("fp32", TINY), 4, kind="disk")


def test_the_cpu_elided_gather_allocates_no_batch_sized_buffer_after_its_first_call():
    """Per-call ~32 MB parts of a 32,768-row batch could be fresh mappings, faulted inside every timed
    gather (host-compact's bimodal CPU gather): the parts are kept, and a smaller batch reuses them."""
    st = Storage(storage_layout("compact", TINY), CAP, step_rows=ENVS, terminal_rows=CAP)
    for t in range(9):
        st.add(**step(t, terminal_every=3))
    first, count = st.sampleable()
    idx = (first + torch.arange(count)) % CAP
    full = st.gather(idx, st.new_batch(count)).clone()
    part, out = idx[: count // 2].flip(0), st.new_batch(count // 2)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], profile_memory=True) as prof:
        st.gather(part, out)
    allocated = sum(max(e.self_cpu_memory_usage, 0) for e in prof.key_averages())
    assert allocated < count // 2 * st.layout.stored_row_bytes  # less than one part of the batch
    assert torch.equal(out, full[: count // 2].flip(0))
