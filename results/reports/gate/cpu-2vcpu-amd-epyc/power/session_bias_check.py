"""Is each gate session biased? Compare the spread of the 4 sessions' median per-pass ratio (per arm and
point) with the spread when the same passes are shuffled into sessions at random (2,000 times).

    tar xzf sessions.tgz -C /tmp/oldpw && python session_bias_check.py /tmp/oldpw/work

p near 0 would mean sessions differ beyond what their passes' own noise gives.
"""
import glob
import json
import os
import random
import statistics
import sys

from rlperf.gate.passdir import load

work = sys.argv[1]
per: dict = {}
for d in sorted(glob.glob(os.path.join(work, "block*"))):
    p = os.path.join(d, "passes")
    with open(os.path.join(p, "passes.json")) as fh:
        doc = json.load(fh)
    arm = os.path.basename(d).split("-", 1)[1]
    for b, h in load(p, doc["base"], doc["head"], doc["machine"]).runs:
        heads = {n: x for (_, n), x in h.points.items()}
        for (_, n), x in b.points.items():
            if x.measured and heads[n].measured:
                per.setdefault((arm, n), {}).setdefault(d, []).append(heads[n].value / x.value)


def sd(values):
    return float(statistics.pstdev([float(v) for v in values]))


rng = random.Random(0)
for (arm, name), sessions in sorted(per.items()):
    medians = [statistics.median(v) for v in sessions.values()]
    observed = sd(medians)
    pool = [r for v in sessions.values() for r in v]
    k = min(len(v) for v in sessions.values())
    shuffled = []
    for _ in range(2000):
        rng.shuffle(pool)
        shuffled.append(sd([statistics.median(pool[i * k:(i + 1) * k]) for i in range(len(sessions))]))
    p = sum(s >= observed for s in shuffled) / len(shuffled)
    print(f"{arm} {name}: session medians {[round(m, 3) for m in medians]}, sd {observed:.4f}; "
          f"shuffled median sd {statistics.median(shuffled):.4f}; p(shuffled sd >= observed) {p:.2f}")
