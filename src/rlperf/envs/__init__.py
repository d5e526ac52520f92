"""Env update_state kernels: one package per workload (inputs, numpy reference, fused Numba kernel).

Nothing is imported here: `rlperf.envs.registry.get(task)` loads a workload (and Numba) on demand.
"""
