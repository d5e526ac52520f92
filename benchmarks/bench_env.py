"""asv env suite: fused Numba update_state kernels against their numpy references.

Thin classes: every parameter list comes from rlperf.envs.cases (RLPERF_ASV_FULL=1 widens the sweep),
every measurement from rlperf.envs.harness / parity. Kernels compile (or load from Numba's cache) in
setup, never inside a timed call; prepared state is cached per parameter tuple on the class, because
asv_runner 0.3 re-runs setup before every timed call. Infeasible points raise NotImplementedError with
the reason (asv shows n/a).

For the gate, decorators from rlperf.gate.meta say how to read each benchmark: asv treats every number as
lower-is-better, but `track_speedup_vs_numpy` is a ratio where higher is better, and the parity tracks
are absolute differences judged against the workload's tolerance, not as ratios between commits.
"""

from __future__ import annotations

from rlperf.envs import cases
from rlperf.gate.meta import higher_is_better, within_tolerance

_P = cases.asv_params()
_PARITY_FIELDS = {  # track name suffix -> (ParityResult field, Tolerances field or None for exact)
    "reward": ("max_abs_reward_diff", "reward_atol"),
    "log": ("max_abs_log_diff", "log_atol"),
    "actor_obs": ("max_abs_actor_obs_diff", "obs_atol"),
    "critic_obs": ("max_abs_critic_obs_diff", "obs_atol"),
    "termination_mismatch": ("termination_mismatch", None),
    "failures": ("failures", None),  # number of failed checks under the full rtol + atol test (0 = ok)
}


def _tolerances() -> dict:
    """Per task, the absolute tolerance of each parity track (None: the task cannot load here)."""
    from rlperf.envs import registry
    from rlperf.errors import UsageError

    out = {}
    for task in registry.TASKS:
        try:
            tol = registry.get(task).tolerances
        except UsageError:
            out[task] = None
            continue
        out[task] = {name: (0 if field is None else getattr(tol, field))
                     for name, (_, field) in _PARITY_FIELDS.items()}
    return out


# The gate reads each benchmark's direction from the function itself (rlperf.gate.meta): the speedup is
# higher-is-better; parity tracks are judged against the workload's absolute tolerance per task (0 for
# the count tracks), never as ratios between commits. Everything else is a cost: lower is better.
PARITY_TOLERANCES = _tolerances()


def _parity_tolerance(name: str) -> dict:
    """{task: absolute limit} of one parity track, for the tasks that load here."""
    return {task: tol[name] for task, tol in PARITY_TOLERANCES.items() if tol is not None} or {"none": 0.0}


class _EnvBench:
    """Shared setup: prepare the task once per process, build inputs once per parameter tuple."""

    timeout = 600  # a cold Numba compile takes seconds; asv's default is 60 s
    # Bounded statistics without --quick: one process per point, 5-20 samples within about a second.
    rounds = 1
    repeat = (5, 20, 1.0)
    _prepared: dict = {}
    _inputs: dict = {}

    def _prepare(self, task):
        from rlperf.envs import harness
        from rlperf.errors import UsageError

        if task not in self._prepared:
            try:
                self._prepared[task] = harness.prepare(task)
            except UsageError as exc:
                raise NotImplementedError(str(exc)) from None
        return self._prepared[task]

    def _case(self, task, num_envs, threads=1, noise_level=1.0):
        from rlperf.envs import registry, threads as pools

        reason = cases.skip_reason(threads, pools.max_numba_threads())
        if reason:
            raise NotImplementedError(reason)
        prepared = self._prepare(task)
        key = (task, num_envs, noise_level)
        if key not in self._inputs:
            w = prepared.workload
            self._inputs[key] = w.make_inputs(num_envs, registry.default_profile(w), seed=cases.SEED,
                                              noise_level=noise_level)
        return prepared.workload, self._inputs[key]


class EnvReference(_EnvBench):
    """Numpy reference per (task, envs): the baseline the kernels are compared with."""

    version = "1"  # asv version: bump only when what this class measures changes (docs/gate.md, rule 4)
    params = (_P["task"], _P["num_envs"])
    param_names = ("task", "num_envs")

    def setup(self, task, num_envs):
        w, inputs = self._case(task, num_envs)
        self.call = lambda: w.reference(inputs)

    def time_reference(self, task, num_envs):
        self.call()


class EnvFused(_EnvBench):
    """Fused kernel per (task, envs, threads); compiled in setup, thread mask set on this thread."""

    version = "1"  # asv version: bump only when what this class measures changes (docs/gate.md, rule 4)
    params = (_P["task"], _P["num_envs"], _P["threads"])
    param_names = ("task", "num_envs", "threads")

    def setup(self, task, num_envs, threads):
        w, inputs = self._case(task, num_envs, threads)
        self.call = w.fused_runner(inputs, threads)
        self.call()  # one untimed call at this thread count (pool start-up)

    def time_fused(self, task, num_envs, threads):
        self.call()


class EnvSpeedup(_EnvBench):
    """numpy ms / numba ms per adjacent pair of calls; higher is better (@higher_is_better).

    Returned as samples (one ratio per pair), so the gate judges it with statistics like a timing instead
    of on one number inside its own noise; pairing adjacent calls cancels slow phases of a shared box."""

    version = "1"  # asv version: bump only when what this class measures changes (docs/gate.md, rule 4)
    params = (_P["task"], _P["num_envs"], _P["threads"])
    param_names = ("task", "num_envs", "threads")
    unit = "numpy ms / numba ms"

    def setup(self, task, num_envs, threads):
        self.w, self.inputs = self._case(task, num_envs, threads)

    @higher_is_better
    def track_speedup_vs_numpy(self, task, num_envs, threads):
        from rlperf.envs import threads as pools
        from rlperf.measure.timing import time_wall

        sweep = cases.asv_sweep()
        fused = self.w.fused_runner(self.inputs, threads)
        pools.apply_budget(threads)
        ratios = []
        for i in range(sweep.warmup + sweep.iters):
            ref_ms = time_wall(lambda: self.w.reference(self.inputs), warmup=0, repeat=1)[0]
            fused_ms = time_wall(fused, warmup=0, repeat=1)[0]
            if i >= sweep.warmup:
                ratios.append(ref_ms / fused_ms)
        return {"samples": ratios, "number": 1}

    track_speedup_vs_numpy.unit = unit


# A cold compile in a fresh process with an empty Numba cache: what a new kernel version costs. The
# child prints the compile time and where the kernel came from, so a cache hit fails instead of passing
# as a compile.
_COMPILE_CHILD = """
import json, sys
from rlperf.envs import harness
prepared = harness.prepare(sys.argv[1])
print(json.dumps({"compile_ms": prepared.compile_ms, "source": prepared.compile_source}))
"""
COMPILE_SAMPLES = 3


def fresh_compile_ms(task: str) -> float:
    """ms of one real compile of `task`'s kernel: a subprocess whose NUMBA_CACHE_DIR is a new empty folder."""
    import json
    import os
    import subprocess
    import sys
    import tempfile

    import rlperf

    src = os.path.dirname(os.path.dirname(os.path.abspath(rlperf.__file__)))  # this process's rlperf
    with tempfile.TemporaryDirectory(prefix="rlperf-numba-cache-") as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache,
               "PYTHONPATH": os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH")) if p)}
        proc = subprocess.run([sys.executable, "-c", _COMPILE_CHILD, task], env=env, capture_output=True,
                              text=True, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(f"compile of {task} failed (exit {proc.returncode}):\n{proc.stderr[-2000:]}")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    if out["source"] != "compiled":
        raise RuntimeError(f"{task}: kernel came from {out['source']!r} in an empty cache; not a compile")
    return out["compile_ms"]


class EnvCompile(_EnvBench):
    """A real compile at 1 thread, in ms: COMPILE_SAMPLES fresh processes, each with an empty Numba cache.

    The former value (first call in an asv process) was a cache load (~0.36 s), not a compile (4-13 s)."""

    version = "1"  # asv version: bump only when what this class measures changes (docs/gate.md, rule 4)
    params = (_P["task"],)
    param_names = ("task",)
    unit = "ms"
    timeout = 1800  # up to COMPILE_SAMPLES cold compiles of the tracking kernel on a loaded 2-vCPU box

    def setup(self, task):
        self._prepare(task)  # skips (n/a, with the reason) a task that cannot load here

    def track_compile_ms(self, task):
        return {"samples": [fresh_compile_ms(task) for _ in range(COMPILE_SAMPLES)], "number": 1}

    track_compile_ms.unit = unit


class EnvParity(_EnvBench):
    """Parity at noise level 0 and 1 thread (C6) on the coverage inputs: absolute diffs, judged against
    PARITY_TOLERANCES (the derived data file rlperf/envs/tolerances.json, rtol 0 there).

    Every (task, envs) check runs once, in setup_cache, for all six tracks: per point and track that
    was a process of its own, each loading the kernel and repeating the same check (18 processes)."""

    version = "1"  # asv version: bump only when what this class measures changes (docs/gate.md, rule 4)
    params = (_P["task"], _P["parity_envs"])
    param_names = ("task", "num_envs")
    timeout = 1800  # setup_cache checks every task

    def setup_cache(self):
        from rlperf.envs import parity, registry

        out = {}
        for task in self.params[0]:
            try:
                w = self._prepare(task).workload
            except NotImplementedError as exc:  # the task cannot load here: its points skip with the reason
                out.update({(task, n): {"skip": str(exc)} for n in self.params[1]})
                continue
            for n in self.params[1]:  # coverage inputs (every term and termination branch), noise level 0
                result = parity.check(w, registry.default_profile(w), n, 1, seed=cases.SEED)
                out[(task, n)] = {name: self._value(result, name) for name in _PARITY_FIELDS}
        return out

    def setup(self, cache, task, num_envs):
        point = cache[(task, num_envs)]
        if "skip" in point:
            raise NotImplementedError(point["skip"])
        self.values = point

    @staticmethod
    def _value(result, name):
        value = getattr(result, _PARITY_FIELDS[name][0])
        return float(len(value) if isinstance(value, list) else value)

    @within_tolerance(_parity_tolerance("reward"))
    def track_parity_reward(self, cache, task, num_envs):
        return self.values["reward"]

    @within_tolerance(_parity_tolerance("log"))
    def track_parity_log(self, cache, task, num_envs):
        return self.values["log"]

    @within_tolerance(_parity_tolerance("actor_obs"))
    def track_parity_actor_obs(self, cache, task, num_envs):
        return self.values["actor_obs"]

    @within_tolerance(_parity_tolerance("critic_obs"))
    def track_parity_critic_obs(self, cache, task, num_envs):
        return self.values["critic_obs"]

    @within_tolerance(_parity_tolerance("termination_mismatch"))
    def track_parity_termination_mismatch(self, cache, task, num_envs):
        return self.values["termination_mismatch"]

    @within_tolerance(_parity_tolerance("failures"))
    def track_parity_failures(self, cache, task, num_envs):
        return self.values["failures"]

    for _name in ("reward", "log", "actor_obs", "critic_obs"):
        locals()[f"track_parity_{_name}"].unit = "abs diff"
    track_parity_termination_mismatch.unit = "count"
    track_parity_failures.unit = "count"
    del _name
