"""Layout offsets and the replay write/sample contract: integrity, wraparound, terminal patch, seeds."""

import pytest
import torch

from rlperf.replay.layout import RowLayout
from rlperf.replay.storage import ReplayStorage

MT = RowLayout(160, 29, 289)
TINY = RowLayout(3, 2, 4)


def test_motion_tracking_offsets_follow_the_spec_table():
    off = MT.offsets()
    assert off["obs"] == (0, 160) and off["next_obs"] == (160, 320) and off["actions"] == (320, 349)
    assert off["reward"] == (349, 350) and off["done"] == (350, 351) and off["truncated"] == (351, 352)
    assert off["critic"] == (352, 641) and off["next_critic"] == (641, 930)
    assert MT.width == 930 and MT.row_bytes == 3720


def test_padding_rounds_rows_up_to_16_bytes():
    assert MT.padded(16).stored_width == 932 and MT.padded(16).stored_row_bytes == 3728
    assert RowLayout(98, 29, 101).padded(16).stored_width == 432
    assert MT.padded(16).width == 930


def _step(n, step, layout=TINY):
    """Rows whose every value encodes (step, env), so a sampled row names where it came from."""
    base = torch.arange(n, dtype=torch.float32) + 1000 * step
    col = lambda w: base[:, None].repeat(1, w)  # noqa: E731
    return dict(obs=col(layout.obs_dim), next_obs=col(layout.obs_dim) + 0.5, actions=col(layout.action_dim),
                reward=base, done=torch.zeros(n), truncated=torch.zeros(n),
                critic=col(layout.critic_dim), next_critic=col(layout.critic_dim) + 0.5)


def test_every_sampled_row_equals_a_written_row_and_only_filled_rows_are_sampled():
    st = ReplayStorage(TINY, 64)
    written = []
    for step in range(3):
        st.add(**_step(8, step))
        written.append(st.table[st.ptr - 8: st.ptr].clone())
    written = torch.cat(written)
    batch = st.sample(500, torch.Generator().manual_seed(0))
    rows = torch.cat([batch.obs, batch.next_obs, batch.actions, batch.rewards[:, None], batch.dones[:, None],
                      batch.truncated[:, None], batch.critic, batch.next_critic], dim=1)
    assert all((written == r).all(dim=1).any() for r in rows)
    assert st.size == 24 and batch.rewards.max() < 3000


def test_writes_wrap_at_capacity_and_split_across_the_end():
    st = ReplayStorage(TINY, 20)
    for step in range(3):  # 24 rows into 20: the third add splits 4 + 4
        st.add(**_step(8, step))
    assert (st.ptr, st.size) == (24, 20)
    assert st.table[0, 0] == 2004 and st.table[3, 0] == 2007  # wrapped rows of step 2
    assert st.table[16, 0] == 2000 and st.table[19, 0] == 2003
    assert st.table[4, 0] == 4 and st.table[8, 0] == 1000  # older rows survive where not overwritten


def test_terminal_rows_get_their_final_observations_before_becoming_visible():
    st = ReplayStorage(TINY, 16)
    step = _step(4, 0)
    mask = torch.tensor([False, True, False, True])
    final_obs, final_critic = torch.full((4, 3), -7.0), torch.full((4, 4), -9.0)
    st.add(**step, terminal_mask=mask, final_obs=final_obs, final_critic=final_critic)
    off = TINY.offsets()
    next_obs = st.table[:4, off["next_obs"][0]:off["next_obs"][1]]
    next_critic = st.table[:4, off["next_critic"][0]:off["next_critic"][1]]
    assert (next_obs[mask] == -7).all() and (next_critic[mask] == -9).all()
    assert (next_obs[~mask] == step["next_obs"][~mask]).all()


def test_sampling_is_deterministic_under_a_seed():
    st = ReplayStorage(TINY, 64)
    st.add(**_step(32, 0))
    a = st.sample(100, torch.Generator().manual_seed(7)).rewards
    b = st.sample(100, torch.Generator().manual_seed(7)).rewards
    c = st.sample(100, torch.Generator().manual_seed(8)).rewards
    assert torch.equal(a, b) and not torch.equal(a, c)


def test_contract_violations_are_refused():
    st = ReplayStorage(TINY, 4)
    with pytest.raises(RuntimeError, match="empty"):
        st.sample(1, torch.Generator())
    with pytest.raises(ValueError, match="exceeds capacity"):
        st.add(**_step(8, 0))
    missing = _step(2, 0)
    missing["critic"] = None
    with pytest.raises(ValueError, match="critic"):
        st.add(**missing)
