"""A fake collector with the interface of `rlperf.e2e.collector.Collector` (no physics), for the
loop and CLI tests, and a test that it honours that interface (num_envs rows per step, terminal patch)."""

from __future__ import annotations

import time

import torch

from rlperf.replay.storage import ReplayStorage

# Hydra overrides for a tiny SAC learner, shared by the e2e CLI and asv-class tests
TINY = ["algo.num_envs=16", "algo.replay_buffer_n=8", "algo.batch_size=32", "algo.actor_hidden_dim=16",
        "algo.critic_hidden_dim=16", "algo.num_atoms=11", "algo.use_compile=false", "training.use_amp=false"]

PHASES = ("physics", "state_read", "noise", "inputs", "update_state", "policy", "replay_add", "reset_done", "other")


class FakeCollector:
    """Random states instead of MuJoCo; the policy (a CPU actor copy) and the replay writes are real."""

    instances: list["FakeCollector"] = []
    done_rate = 0.05  # share of rows ending per step

    def __init__(self, workload, *, physics="mujoco", kernel="fused", threads=1, seed=0,
                 replay_writer=None, policy=None):
        num_envs = workload.num_envs  # as Collector: the workload is the one source of the env count
        self.num_envs, self.task, self.physics, self.kernel = num_envs, workload.task, physics, kernel
        self.obs_dim, self.critic_dim, self.action_dim = workload.obs_dim, workload.critic_dim, workload.action_dim
        self.writer, self.policy = replay_writer, policy
        self.gen = torch.Generator().manual_seed(seed)
        self.obs = torch.randn(num_envs, self.obs_dim, generator=self.gen)
        self.critic = torch.randn(num_envs, self.critic_dim, generator=self.gen)
        self.steps = self.weight_loads = 0
        FakeCollector.instances.append(self)

    def step(self) -> dict[str, float]:
        t0 = time.perf_counter()
        next_obs = self.obs + 0.01 * torch.randn(self.obs.shape, generator=self.gen)
        next_critic = self.critic + 0.01 * torch.randn(self.critic.shape, generator=self.gen)
        t1 = time.perf_counter()
        if self.kernel == "numpy":
            next_obs = torch.from_numpy(next_obs.numpy().copy())
        t2 = time.perf_counter()
        actions = (self.policy.act(self.obs) if self.policy is not None
                   else torch.rand(self.num_envs, self.action_dim, generator=self.gen) * 2 - 1)
        t3 = time.perf_counter()
        done = (torch.rand(self.num_envs, generator=self.gen) < self.done_rate).float()
        self.writer.add(obs=self.obs, next_obs=next_obs, actions=actions, reward=next_obs[:, 0], done=done,
                        truncated=torch.zeros_like(done), critic=self.critic, next_critic=next_critic,
                        terminal_mask=done.bool(), final_obs=next_obs, final_critic=next_critic)
        t4 = time.perf_counter()
        self.obs, self.critic, self.steps = next_obs, next_critic, self.steps + 1
        ms = [(b - a) * 1e3 for a, b in ((t0, t1), (t1, t2), (t2, t3), (t3, t4))]
        return {"physics": ms[0], "update_state": ms[1], "policy": ms[2], "replay_add": ms[3], "reset_done": 0.0,
                "state_read": 0.0, "noise": 0.0, "inputs": 0.0, "other": 0.0, "total": sum(ms)}

    def set_policy_weights(self, state_dict) -> float:
        t0 = time.perf_counter()
        if self.policy is not None:
            self.policy.load_state_dict({k: v.to("cpu") for k, v in state_dict.items()})
        self.weight_loads += 1
        return (time.perf_counter() - t0) * 1e3

    def prefill(self, writer, rows: int) -> dict:
        written = 0
        while written < rows:
            n = min(self.num_envs, rows - written)
            obs = torch.randn(n, self.obs_dim, generator=self.gen)
            critic = torch.randn(n, self.critic_dim, generator=self.gen)
            zeros = torch.zeros(n)
            writer.add(obs=obs, next_obs=obs, actions=torch.zeros(n, self.action_dim), reward=zeros, done=zeros,
                       truncated=zeros, critic=critic, next_critic=critic)
            written += n
        return {"rows": rows, "source": "fake random rows (test collector)"}


def test_fake_collector_writes_one_vector_step_per_step():
    from rlperf.workload import compose

    wl = compose("g1_walk_flat", "mujoco", ["algo.num_envs=8"])
    storage = ReplayStorage(wl.layout, 32)
    fake = FakeCollector(wl, replay_writer=storage)
    phases = fake.step()
    assert storage.ptr == 8 and set(PHASES) <= set(phases) and phases["total"] > 0
    assert fake.prefill(storage, 20)["rows"] == 20 and storage.ptr == 28
