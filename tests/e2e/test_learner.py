"""The SAC learner: config from the task yaml, C51 projection, and that it learns (tiny CPU widths)."""

from __future__ import annotations

import pytest
import torch

from rlperf.e2e.learner.config import learner_config
from rlperf.e2e.learner.sac import SacLearner, project_distribution
from rlperf.e2e.learner.synthetic import synthetic_batch
from rlperf.errors import UsageError

TINY = ["algo.actor_hidden_dim=32", "algo.critic_hidden_dim=48", "algo.num_atoms=21", "algo.batch_size=64",
        "algo.use_compile=false", "training.use_amp=false"]


pytestmark = pytest.mark.usefixtures("one_torch_thread")  # tests/conftest.py


def test_config_follows_each_task():
    mt = learner_config("g1_motion_tracking", "mujoco")
    walk = learner_config("g1_walk_flat", "mujoco")
    assert (mt.num_atoms, mt.updates_per_step, mt.policy_frequency, mt.max_grad_norm) == (501, 4, 2, 10.0)
    assert (walk.num_atoms, walk.updates_per_step, walk.use_symmetry, walk.learner_batch) == (101, 8, True, 4096)
    assert mt.actor_widths == (512, 256, 128) and mt.critic_widths == (768, 384, 192)
    assert (mt.v_min, mt.v_max, mt.use_amp) == (-20.0, 20.0, True)
    assert mt.target_entropy == pytest.approx(-14.5) and walk.target_entropy == 0.0


def test_bad_learner_values_are_usage_errors():
    with pytest.raises(UsageError, match="amp_dtype 'float16'.*valid: auto, bfloat16"):
        learner_config("g1_walk_flat", "mujoco", ["algo.amp_dtype=float16"])
    with pytest.raises(UsageError, match="v_min"):
        learner_config("g1_walk_flat", "mujoco", ["algo.v_min=5", "algo.v_max=1"])
    with pytest.raises(UsageError, match="use_cuda_graphs"):
        learner_config("g1_walk_flat", "mujoco", ["algo.use_compile=false", "algo.use_cuda_graphs=true"])


def test_projection_keeps_mass_and_mean_inside_the_support():
    g = torch.Generator().manual_seed(1)
    probs = torch.softmax(torch.randn(64, 11, generator=g), -1)
    support = torch.linspace(-1.0, 1.0, 11)
    shift = torch.rand(64, 1, generator=g) * 0.6 - 0.3
    atoms = (support * 0.5 + shift).expand(64, 11)  # stays inside [-1, 1]
    out = project_distribution(atoms, probs, -1.0, 1.0)
    assert torch.allclose(out.sum(-1), torch.ones(64), atol=1e-6)
    assert torch.allclose((out * support).sum(-1), (probs * atoms).sum(-1), atol=1e-5)
    on_grid = project_distribution(support.expand(64, 11), probs, -1.0, 1.0)  # lo == hi everywhere
    assert torch.allclose(on_grid, probs, atol=1e-6)


@pytest.mark.usefixtures("g1_model")  # tests/e2e/conftest.py: the walk learner's mirror
def test_td_loss_falls_on_a_fixed_batch():
    # gamma 0: the TD target is the reward itself (two atoms), so the cross-entropy has room to fall
    # from ~2 ln(21) (both critics near uniform) toward the entropy of that two-atom target.
    cfg = learner_config("g1_walk_flat", "mujoco", [*TINY, "algo.gamma=0.0", "algo.v_min=-2", "algo.v_max=2",
                                                    "algo.critic_lr=3e-3"])
    learner = SacLearner(cfg, seed=0)
    batch = synthetic_batch(cfg, cfg.learner_batch)
    losses = [float(learner.update(batch, k)["critic_loss"]) for k in range(80)]
    assert sum(losses[-5:]) / 5 < 0.6 * sum(losses[:5]) / 5, losses[::10]


@pytest.mark.usefixtures("g1_model")  # tests/e2e/conftest.py: the walk learner's mirror
def test_td_loss_falls_with_bootstrapping():
    cfg = learner_config("g1_walk_flat", "mujoco", [*TINY, "algo.critic_lr=3e-3"])
    learner = SacLearner(cfg, seed=0)
    batch = synthetic_batch(cfg, cfg.learner_batch)
    losses = [float(learner.update(batch, k)["critic_loss"]) for k in range(60)]
    assert sum(losses[-5:]) < sum(losses[:5]), losses[::10]


def test_gradients_reach_every_parameter():
    cfg = learner_config("g1_motion_tracking", "mujoco", TINY)
    learner = SacLearner(cfg, seed=0)
    learner.update(synthetic_batch(cfg, cfg.learner_batch), 0)  # index 0: critic, actor and alpha all step
    named = [*learner.actor.named_parameters(prefix="actor"), *learner.critic.named_parameters(prefix="critic"),
             ("log_alpha", learner.log_alpha)]
    for name, p in named:
        assert p.grad is not None, f"{name} got no gradient"
        assert torch.isfinite(p.grad).all() and p.grad.abs().sum() > 0, f"{name} gradient is zero or not finite"
    assert all(not p.requires_grad for p in learner.target_critic.parameters())


def test_iteration_follows_updates_and_policy_frequency_and_moves_targets():
    cfg = learner_config("g1_motion_tracking", "mujoco", TINY)  # 4 updates, actor every 2nd
    learner = SacLearner(cfg, seed=0)
    before = [p.clone() for p in learner.target_critic.parameters()]
    out = learner.iteration(synthetic_batch(cfg, cfg.learner_batch * cfg.updates_per_step))
    assert len(out) == 4 and ["actor_loss" in o for o in out] == [True, False, True, False]
    assert any(not torch.equal(a, b) for a, b in zip(before, learner.target_critic.parameters()))
    with pytest.raises(ValueError, match="smaller than updates_per_step"):
        learner.iteration(synthetic_batch(cfg, cfg.learner_batch))


@pytest.mark.usefixtures("g1_model")  # tests/e2e/conftest.py: the walk learner's mirror
def test_bf16_autocast_runs_on_cpu():
    cfg = learner_config("g1_walk_flat", "mujoco", [*TINY[:-1], "training.use_amp=true"])
    learner = SacLearner(cfg, seed=0)
    out = learner.update(synthetic_batch(cfg, cfg.learner_batch), 0)
    assert all(torch.isfinite(v).all() for v in out.values())
    action = learner.cpu_actor().act(torch.zeros(3, cfg.obs_dim))
    assert action.shape == (3, cfg.action_dim) and action.abs().max() <= 1.0


@pytest.mark.usefixtures("g1_model")  # tests/e2e/conftest.py: the walk learner's mirror
def test_learner_timing_returns_one_sample_per_iteration():
    from rlperf.e2e.learner.timing import learner_iteration_ms

    samples = learner_iteration_ms("g1_walk_flat", "mujoco", "eager", device="cpu", warmup=0, repeat=2,
                                   overrides=tuple(TINY))
    assert len(samples) == 2 and all(s > 0 for s in samples)
    with pytest.raises(UsageError, match="valid: eager, compile, cuda-graphs"):
        learner_iteration_ms("g1_walk_flat", "mujoco", "jit", device="cpu", warmup=0, repeat=1)


@pytest.mark.gpu
@pytest.mark.parametrize("mode", ["eager", "compile", "cuda-graphs"])
@pytest.mark.usefixtures("g1_model")
def test_learner_modes_run_on_the_gpu(mode):
    import torch

    from rlperf.e2e.learner.timing import learner_iteration_ms

    samples = learner_iteration_ms("g1_walk_flat", "mujoco", mode, device=torch.device("cuda", 0), warmup=3,
                                   repeat=2, overrides=("algo.actor_hidden_dim=64", "algo.critic_hidden_dim=64"))
    assert len(samples) == 2 and all(s > 0 for s in samples)
