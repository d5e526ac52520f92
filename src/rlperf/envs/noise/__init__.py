"""Actor-observation noise generation: variants to benchmark and a counter-based in-kernel generator.

Why: at 8,192 envs four numpy `standard_normal` draws cost 5-6 ms single-threaded, 55-80% of
update_state (the seed finding). A counter-based generator keyed by (seed, step, env, k) can run inside
the update_state kernels per env: draws never depend on the thread count and cost no memory traffic.

Per-env API for kernels (rlperf.envs.noise.counter, all `@njit(inline="always")`):

    key = stream_key(seed, step, env)       # once per env and step (3 splitmix64 rounds)
    u = uniform_at(key, k)                  # float32 U(-1, 1), k = 0, 1, ... the value's column
    z = normal_at(key, k)                   # float32 N(0, 1) (Box-Muller on one 64-bit draw)
    uniform_f32(seed, step, env, k)         # the same values without a hoisted key
    normal_f32(seed, step, env, k)

Whole-array oracle (rlperf.envs.noise.oracle, numpy, bit-identical uniforms): `uniform(seed, step,
num_envs, width)` and `normal(...)`, the same (num_envs, width) draws a kernel makes with column k.
Variants and their cases: rlperf.envs.noise.variants / rlperf.envs.noise.cases.
"""
