"""What a plan will run where, said before anything is built: the first thing `rlperf e2e` prints.

Why: on a CPU-only box the learner silently moves to the CPU and every GPU placement is skipped; a user
who reads that only in the JSON's `skipped` has waited for the whole run to learn it.
"""

from __future__ import annotations

from rlperf.replay.placements.specs import lookup


def learner_mode(cfg) -> str:
    if not cfg.use_compile:
        return "eager"
    return "torch.compile + CUDA graphs" if cfg.use_cuda_graphs else "torch.compile, no CUDA graphs"


def placement_split(placements, *, cuda: bool) -> tuple[list[str], list[str]]:
    """(placements that can run here, 'name (why not)' for the rest); memory is judged later, per point."""
    runs, skips = [], []
    for name in placements:
        spec = lookup(name)
        why = "needs CUDA" if spec.needs_cuda and not cuda else spec.unavailable_reason()
        if why:
            skips.append(f"{name} ({why.replace(f'placement {name!r} ', '')})")
        else:
            runs.append(name)
    return runs, skips


def where_lines(plan, device, device_name: str = "") -> list[str]:
    """A few lines: where the learner and the collector run, which placements run or are skipped, how much."""
    cfg = plan.learner(plan.num_envs[0])
    runs, skips = placement_split(plan.placements, cuda=device is not None)
    physics = ("MuJoCo physics" if plan.physics == "mujoco"
               else "states replayed from a short MuJoCo recording (--physics recorded)")
    if device is None:
        lines = [f"no CUDA device: the SAC learner ({learner_mode(cfg)}) runs on the CPU, and every placement "
                 f"that needs CUDA is skipped"]
    else:
        lines = [f"the SAC learner runs on {device}{f' ({device_name})' if device_name else ''}: {learner_mode(cfg)}"]
    lines.append(f"the collector runs on the CPU ({plan.threads} threads): {physics}, update_state, the policy")
    lines.append(f"placements measured: {', '.join(runs) or 'none'}"
                 + (f"; skipped: {', '.join(skips)}" if skips else ""))
    points = len(plan.num_envs) * len(runs) * len(plan.schedules) * len(plan.prefetch)
    lines.append(f"{points} point(s) ({len(plan.num_envs)} env count(s) x {len(runs)} placement(s) x "
                 f"schedule {', '.join(plan.schedules)} x prefetch {', '.join(plan.prefetch)}), each "
                 f"{2 * plan.warmup} warmup + {2 * plan.iterations} measured iterations (replay- and "
                 f"resident-fed); then the collector A/B: {', '.join(plan.kernels)} x {plan.ab_steps} steps"
                 + (" (skipped)" if plan.ab_steps <= 0 else ""))
    return lines
