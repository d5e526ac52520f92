"""Task name -> EnvWorkload. Workload packages load lazily, so a missing or broken one fails alone."""

from __future__ import annotations

import importlib
import importlib.util

from rlperf.envs.base import EnvWorkload
from rlperf.errors import UsageError, choice_error

# task -> package exposing a module-level WORKLOAD (motion tracking is developed separately).
PACKAGES = {
    "g1_motion_tracking": "rlperf.envs.motion_tracking",
    "g1_walk_flat": "rlperf.envs.walk",
    "probe": "rlperf.envs.probe",
}
TASKS = tuple(PACKAGES)


def get(task: str) -> EnvWorkload:
    """The workload of `task`; a UsageError naming the valid tasks, or why this one cannot load."""
    if task not in PACKAGES:
        raise choice_error("task", task, TASKS)
    package = PACKAGES[task]
    try:
        module = importlib.import_module(package)
    except ModuleNotFoundError as exc:
        if exc.name and package.startswith(exc.name):
            raise UsageError(f"task {task!r} is not available: its workload package {package} is not "
                             f"installed in this checkout yet; available: {', '.join(available())}") from None
        raise UsageError(f"task {task!r} failed to import ({package}): {exc}") from exc
    except ImportError as exc:
        raise UsageError(f"task {task!r} failed to import ({package}): {exc}") from exc
    workload = getattr(module, "WORKLOAD", None)
    if workload is None:
        raise UsageError(f"task {task!r}: {package} defines no module-level WORKLOAD")
    return workload


def available() -> list[str]:
    """Tasks whose package exists (checked without importing it)."""
    return [task for task, pkg in PACKAGES.items() if importlib.util.find_spec(pkg) is not None]


def default_profile(workload: EnvWorkload) -> str:
    """The profile used when none is named: the workload's own choice, else sac_default, else the first."""
    explicit = getattr(workload, "default_profile", None)
    if explicit in workload.profiles:
        return explicit
    return "sac_default" if "sac_default" in workload.profiles else workload.profiles[0]


def check_profiles(workload: EnvWorkload, profiles: list[str]) -> list[str]:
    """`profiles` unchanged if all belong to the workload; else a UsageError listing the valid ones."""
    for profile in profiles:
        if profile not in workload.profiles:
            raise choice_error(f"profile for task {workload.name!r}:", profile, workload.profiles)
    return profiles
