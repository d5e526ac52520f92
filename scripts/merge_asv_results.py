"""Merge asv result files of one commit, environment and machine written by separate asv invocations.

asv saves a result file when an invocation ends; a device run split into several invocations (each
within its time budget) leaves several copies of the same file. This keeps every benchmark from all
of them and refuses to merge files of different commits, environments or machines.

    python scripts/merge_asv_results.py OUT.json IN1.json IN2.json ...
"""

import json
import sys


def merge(paths: list[str]) -> dict:
    docs = [json.load(open(p)) for p in paths]
    base = docs[0]
    for path, doc in zip(paths[1:], docs[1:]):
        for key in ("commit_hash", "env_name", "params", "result_columns", "version"):
            if doc[key] != base[key]:
                raise SystemExit(f"{path}: {key} differs from {paths[0]}; refusing to merge")
        for name, value in doc["results"].items():
            if name in base["results"] and base["results"][name] != value:
                raise SystemExit(f"{path}: {name} present in two inputs with different values")
            base["results"][name] = value
        base["durations"].update(doc["durations"])
        base["date"] = max(base["date"], doc["date"])
    return base


if __name__ == "__main__":
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    out = merge(sys.argv[2:])
    with open(sys.argv[1], "w") as fh:
        json.dump(out, fh, indent=None, separators=(",", ":"))
    print(f"wrote {sys.argv[1]} with {len(out['results'])} benchmarks")
