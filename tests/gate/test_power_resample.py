"""`rlperf gate-power resample` (rlperf.gate.power.resample): kept pairs re-judged without a clone, with and
without a confirming round."""

from __future__ import annotations

import json
from pathlib import Path

from rlperf.cli import main as rlperf_main
from rlperf.gate.power import resample as resample_module


def resample_cli(argv) -> int:
    return rlperf_main(["gate-power", "resample", *argv])


def _work(tmp_path, ratios: list[float]) -> Path:
    """A `rlperf gate-power study` work dir: one null session whose point has one trial of 10 pairs per ratio."""
    from rlperf.gate import paired

    work = tmp_path / "work"
    session = work / "block0-null"
    (session / "passes").mkdir(parents=True)
    point = paired.PointPairs(name="bench.f('g1_walk_flat', 1)", number=1,
                              pairs=[(1.0, r) for r in ratios for _ in range(10)], segments=[10] * len(ratios))
    paired.save(str(session / "passes" / "paired.json"), [point], paired.PairedSpec(seconds=9.0, block=5))
    (work / "sessions.json").write_text(json.dumps({"sessions": [{"arm": "null", "dir": str(session)}]}))
    return work


def test_a_confirming_round_clears_a_lone_slow_trial_and_a_screen_admits_a_near_miss(tmp_path):
    work = str(_work(tmp_path, [1.09, 1.00, 1.00, 1.04]))
    plain = resample_module.resample(work, [4], [1.05], "never")
    assert plain[0]["false_alarms_per_point"] == (1, 4)  # trial 0 at x1.09
    # joined with trial 1 (x1.00), trial 0's 20 pairs: 2 blocks at x1.09, 2 at x1.00 -> median x1.045
    assert resample_module.resample(work, [4], [1.05], "never", offset=1)[0]["false_alarms_per_point"] == (0, 4)
    # a screen of 0.6 (x1.03) also re-samples trial 3 (x1.04), which its round (trial 2, K earlier) clears
    screened = resample_module.resample(work, [4], [1.05], "never", offset=1, screen=0.6)
    assert screened[0]["false_alarms_per_point"] == (0, 4)
    assert resample_module.confirmed(_point(work), 4, 0, 5, 1.03, 1, 0.6) is True  # joined x1.045 > x1.03
    assert resample_module.confirmed(_point(work), 4, 3, 5, 1.03, 1, 0.6) is False  # x1.04 and x1.00: x1.02


def _point(work: str):
    from rlperf.gate import paired

    return paired.load(str(Path(work) / "block0-null" / "passes" / "paired.json"))[1][0]


def test_bad_arguments_exit_2(tmp_path):
    work = str(_work(tmp_path, [1.0, 1.0]))
    assert resample_cli([work, "--injected", "x", "--confirm", "2", "--trials", "2"]) == 2
    assert resample_cli([work, "--injected", "x", "--screen", "0"]) == 2
    assert resample_cli([str(tmp_path), "--injected", "x"]) == 2


def test_the_resampled_ratio_is_the_judges_median_of_per_block_ratios(tmp_path):
    from rlperf.gate import paired

    point = paired.PointPairs(name="p", number=1, pairs=[(1.0, r) for r in (1.0, 1.0, 1.2, 1.2, 1.1, 1.1)])
    assert resample_module.ratio(point, 2) == 1.1  # blocks of 2: x1.0, x1.2, x1.1 -> median x1.1
    assert resample_module.flagged(point, 2, 1.05) is True and resample_module.flagged(point, 2, 1.10) is False
    assert resample_module.ratio(paired.PointPairs(name="p", number=1, pairs=[]), 2) is None


def test_the_table_is_written_and_printed(tmp_path, capsys):
    work = str(_work(tmp_path, [1.09, 1.00]))
    out = tmp_path / "resample.md"
    assert resample_cli([work, "--trials", "2", "--factors", "1.05", "--injected", "never", "--out-md", str(out)]) == 0
    text = out.read_text()
    assert text in capsys.readouterr().out
    assert text.startswith("command: `rlperf gate-power resample") and "50.0% (1/2" in text
