"""One side of a paired measurement: a process that holds one asv benchmark point and times it on demand.

The driver (gate.paired) starts one worker per commit, each with that commit's package first on the
path, and asks them for samples in turn. The worker's source is run with `python -c`, not imported,
so it never loads the driver's rlperf: it must stay free of rlperf imports.

    python -c SOURCE BENCHMARK_DIR POINT      POINT e.g. bench_env.EnvFused.time_fused('probe', 8192, 2)

Protocol, one line each way on the worker's original stdout (benchmark output goes to stderr):
    -> "ready <kind> <seconds of one warm call>" | "skip <reason>" | "error <message>"
    <- "number <n>"  -> "ok"               calls per sample, the same on both sides (time_ points)
    <- "sample"      -> "<value>"          time_: seconds of n calls timed together; track_: the value
                                           the call returns (the median of its samples, when it
                                           returns asv's {"samples": [...]})
    <- "quit"                              teardown, exit 0
"""

import ast
import importlib
import os
import statistics
import sys
import time
import traceback


PACKAGE = ""  # the benchmark folder's name when it is a package: asv imports the suite as that package


def import_suite_module(module):
    """`module` of the suite as asv imports it: `benchmarks.bench_replay` when the folder is a package, so
    a benchmark file's relative imports (`from ._suite import ...`) work here as they do under asv."""
    return importlib.import_module(f"{PACKAGE}.{module}" if PACKAGE else module)


def parse_point(point):
    """'mod.Class.time_x(1, 2)' -> ('mod', ['Class', 'time_x'], (1, 2)); module-level functions too."""
    head, paren, rest = point.partition("(")
    params = ast.literal_eval("(" + rest) if paren else ()
    if not isinstance(params, tuple):
        params = (params,)
    parts = head.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        module = ".".join(parts[:cut])
        full = f"{PACKAGE}.{module}" if PACKAGE else module
        try:
            import_suite_module(module)
        except ModuleNotFoundError as exc:
            if exc.name and (full == exc.name or full.startswith(exc.name + ".")):
                continue  # not a module at this cut: try a shorter one
            raise  # the module exists but something it imports does not: say so, not "no module"
        return module, parts[cut:], params
    raise ImportError(f"no module of {head!r} imports from {sys.path[0]!r}")


def load(point):
    """(kind, call, teardown) for one point, after the benchmark's own setup; NotImplementedError = skip."""
    module_name, attrs, params = parse_point(point)
    owner = import_suite_module(module_name)
    if len(attrs) == 2:
        instance = getattr(owner, attrs[0])()
        func = getattr(instance, attrs[1])
        holder = instance
    else:
        func = getattr(owner, attrs[0])
        holder = owner
    setup = getattr(func, "setup", None) or getattr(holder, "setup", None)
    teardown = getattr(func, "teardown", None) or getattr(holder, "teardown", None)
    kind = "track" if attrs[-1].startswith("track_") else "time"
    if setup is not None:
        setup(*params)
    return kind, (lambda: func(*params)), (lambda: teardown(*params) if teardown is not None else None)


def track_value(result):
    """A track's number: its own value, or the median of the samples it returned (asv's sample dict)."""
    if isinstance(result, dict):
        return float(statistics.median(result["samples"]))
    return float(result)


def one_call_seconds(call, budget=0.2):
    """Warm the point for about `budget` seconds; the fastest single call seen."""
    best, start = float("inf"), time.perf_counter()
    while True:
        t0 = time.perf_counter()
        call()
        t1 = time.perf_counter()
        best = min(best, t1 - t0)
        if t1 - start >= budget:
            return best


def main(argv):
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # the benchmark's own prints (Python or C) must not corrupt the protocol
    sys.stdout = sys.stderr
    global PACKAGE
    bench_dir, point = os.path.abspath(argv[1]), argv[2]
    if os.path.isfile(os.path.join(bench_dir, "__init__.py")):
        PACKAGE = os.path.basename(bench_dir)
        sys.path.insert(0, os.path.dirname(bench_dir))
    else:
        sys.path.insert(0, bench_dir)
    try:
        kind, call, teardown = load(point)
        if kind == "track":  # a warm call's time: the first may compile (a fresh worktree misses Numba's cache)
            track_value(call())
            t0 = time.perf_counter()
            track_value(call())
            proto.write(f"ready track {time.perf_counter() - t0!r}\n")
        else:
            proto.write(f"ready time {one_call_seconds(call)!r}\n")
    except NotImplementedError as exc:
        proto.write(f"skip {' '.join(str(exc).split())}\n")
        return 0
    except Exception as exc:  # the driver reports it as the point's failure, with the traceback on stderr
        traceback.print_exc()
        proto.write(f"error {type(exc).__name__}: {' '.join(str(exc).split())}\n")
        return 0
    number = 1
    timer = time.perf_counter
    for line in sys.stdin:
        cmd, _, arg = line.strip().partition(" ")
        if cmd == "number":
            number = max(1, int(arg))
            proto.write("ok\n")
        elif cmd == "sample" and kind == "track":
            proto.write(f"{track_value(call())!r}\n")
        elif cmd == "sample":
            t0 = timer()
            for _ in range(number):
                call()
            proto.write(f"{timer() - t0!r}\n")
        else:
            break
    teardown()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
