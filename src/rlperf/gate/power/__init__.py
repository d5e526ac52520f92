"""The gate's detection power, measured (`rlperf gate-power`; docs/gate.md, Detection power).

One concern per module: `injection` (the arms: known slowdowns and a null change committed in a clone,
the chain calibrated by `chain_timing` in a fresh process), `sessions` (running `rlperf gate --run` per
arm and judging what it kept with the gate's own flow), `trials` (cutting kept passes or pairs into
disjoint trials), `tables` (detection and false-alarm rates with Wilson intervals), `resample` (paired
trials re-cut without measuring), `session_bias` (sessions against shuffled passes), `study` (the whole
run: options, clone, trials, outputs).
"""
