"""One replay result document from several runs of the same sweep split by capacity (one process each,
so a slow large-capacity part cannot take the others with it: scripts/device/replay_single.sh).

Points keep the timings and floors of the run that measured them; the merged document names every part
(command, time, ceilings) under `parts`, and its top-level ceilings are the first part's. A part may itself be a
merged document (placements added to a report later, issue 23): its own parts are kept, in their order, so the
provenance of every point survives a second merge.
"""

from __future__ import annotations

from rlperf.errors import UsageError

SAME_KEYS = ("schema", "schema_version", "workload")  # parts of one sweep agree on these
SAME_ARGS = ("task", "sim", "gpu_counts", "warmup", "repeat", "seed")


def merge_replay_docs(docs: list[dict], names: list[str], replace_reason: str | None = None,
                      take: list[str] | None = None) -> dict:
    """`docs` (read from `names`) as one document; refuses parts of different sweeps, and repeated points unless
    `replace_reason` says why a later part measures them again (the code of those placements changed): then the later
    part's points (measured or skipped) replace the earlier ones, which move to `replaced` with the reason. `take`:
    from every part after the first, only these placements' points (a part that also measured a placement whose code
    changed again since); each such part's entry in `parts` says which it gave."""
    if len(docs) < 2:
        raise UsageError("merge needs at least two replay result files")
    if take is not None:
        docs = [docs[0]] + [_taken(d, n, take) for d, n in zip(docs[1:], names[1:])]
    first = docs[0]
    for doc, name in zip(docs[1:], names[1:]):
        for key in SAME_KEYS:
            if doc.get(key) != first.get(key):
                raise UsageError(f"{name}: {key} differs from {names[0]}'s; not parts of one sweep")
        for key in SAME_ARGS:
            if doc["args"].get(key) != first["args"].get(key):
                raise UsageError(f"{name}: args.{key} differs from {names[0]}'s; not parts of one sweep")
        if doc["machine"].get("name") != first["machine"].get("name"):
            raise UsageError(f"{name}: measured on {doc['machine'].get('name')!r}, {names[0]} on "
                             f"{first['machine'].get('name')!r}")
    order = {p: i for i, p in enumerate(dict.fromkeys(p for d in docs for p in d["args"]["placements"]))}

    def key(r):
        return r.get("world_size", 1), r["capacity_rows"], order.get(r["placement"], len(order)), r["placement"]

    if replace_reason is not None and not replace_reason.strip():
        raise UsageError("say why the later part measures these points again (--replace REASON)")
    kept = [(list(d["results"]), list(d["skipped"])) for d in docs]
    replaced = []
    if replace_reason:
        for later in range(1, len(docs)):
            covered = {key(r) for r in kept[later][0] + kept[later][1]}
            for earlier in range(later):
                for kind, entries in zip(("result", "skipped"), kept[earlier]):
                    gone = [r for r in entries if key(r) in covered]
                    replaced += [{kind: r, "in": names[earlier], "by": names[later], "reason": replace_reason}
                                 for r in gone]
                    entries[:] = [r for r in entries if key(r) not in covered]
    results = sorted((r for res, _ in kept for r in res), key=key)
    points = [key(r) for r in results]
    if len(set(points)) != len(points):
        raise UsageError("the parts measure the same point twice; merge parts of disjoint capacities, or give the "
                         "reason a later part measures them again (--replace)")
    merged = dict(first)
    merged["results"] = results
    merged["skipped"] = [s for _, skipped in kept for s in skipped]
    if replaced or "replaced" in first:
        merged["replaced"] = list(first.get("replaced", [])) + replaced
    merged["command"] = " ; ".join(d["command"] for d in docs)
    merged["args"] = dict(first["args"], capacity_rows=sorted({c for d in docs for c in d["args"]["capacity_rows"]}),
                          placements=list(order))
    merged["parts"] = [part for d, n in zip(docs, names) for part in _parts_of(d, n)]
    return merged


def _taken(doc: dict, name: str, take: list[str]) -> dict:
    """`doc` with only the points of the placements in `take`; refused if it measured none of them."""
    if "parts" in doc:
        raise UsageError(f"{name}: a merged document gives all its points or none; take placements from its parts")
    missing = [p for p in take if p not in doc["args"]["placements"]]
    if missing:
        raise UsageError(f"{name} did not measure {', '.join(missing)}; it measured "
                         f"{', '.join(doc['args']['placements'])}")
    out = dict(doc, results=[r for r in doc["results"] if r["placement"] in take],
               skipped=[s for s in doc["skipped"] if s["placement"] in take])
    out["args"] = dict(doc["args"], placements=[p for p in doc["args"]["placements"] if p in take])
    out["placements_taken"] = list(take)
    out["command"] = f"{doc['command']} [points taken: {', '.join(take)}]"
    return out


def _parts_of(doc: dict, name: str) -> list[dict]:
    """The parts a document stands for: its own `parts` if it was merged before, else itself."""
    if "parts" in doc:
        return list(doc["parts"])
    part = {"file": name, "command": doc["command"], "created_at": doc["created_at"], "ceilings": doc["ceilings"]}
    if "placements_taken" in doc:
        part["placements_taken"] = doc["placements_taken"]
    return [part]
