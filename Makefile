# The two commands of the README: `make bench` (the CPU suite, published) and `make test`.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.rlperf-installed
ASV := $(PY) -m asv
# asv publish, then rlperf's default view of each graph page (rlperf.asvtools.site: readable lines,
# the legend beside the plot). asv.conf.json's html_dir is html.
PUBLISH = $(ASV) publish && $(PY) -m rlperf site defaults html
MACHINE ?= $(shell $(PY) -m rlperf machine --print-name 2>/dev/null)
# `make bench BENCH=bench_env` narrows the points to an asv --bench regex (make bench-full BENCH=... for all).
BENCH ?=
BASE ?= main

.PHONY: env test bench bench-replay bench-env bench-full bench-inner gate publish site-check preview clean

env: $(STAMP)

$(STAMP): pyproject.toml scripts/bootstrap.sh
	VENV=$(VENV) scripts/bootstrap.sh
	touch $@

test: env
	$(PY) -m pytest

# `rlperf bench` (src/rlperf/commands/bench.py): the default points (a few per benchmark class) once each
# (--quick) into the git-ignored .asv/results/$(MACHINE)/, then the site (html/) and a summary of points
# measured, skipped (reasons) and failed (names). Exit 0 unless a point failed (2). Points that need CUDA
# are left out on a host without a GPU, once per benchmark. RECORD=1 stores into results/asv/$(MACHINE)/
# instead, refused (exit 2, before measuring) for a committed folder measured on another host.
BENCH_ARGS = --machine "$(MACHINE)" $(if $(BENCH),--bench "$(BENCH)") $(if $(RECORD),--record)

bench: env
	@$(PY) -m rlperf bench $(BENCH_ARGS)

bench-replay: BENCH = ^bench_replay
bench-replay: bench

bench-env: BENCH = ^bench_env
bench-env: bench

# Every point with full statistics (no --quick, samples recorded): what the gate compares. Hours on 2 cores.
bench-full: env
	@$(PY) -m rlperf bench --full $(BENCH_ARGS)

# The inner loop: the same cases under pytest-benchmark (see docs/README-suite.md).
bench-inner: env
	$(PY) -m pytest tests/bench --benchmark-only --benchmark-enable

# Gate HEAD against $(BASE) on this machine as CI does: both measured now, interleaved, each in its own
# worktree, under gate.toml's profile for this host (gpu where a CUDA device is visible, else xeon;
# PROFILE=NAME picks one). QUICK=1: a fast look (1 pass, no paired sampling), labelled not what CI runs.
# Measurements go to the git-ignored .asv/gate-results/ (the committed history only with rlperf gate --store).
PROFILE ?=
QUICK ?=
gate: env
	$(PY) -m rlperf gate --run --base $(BASE) --head HEAD --machine "$(MACHINE)" \
	  $(if $(PROFILE),--profile "$(PROFILE)") $(if $(QUICK),--quick) --out-md out/gate.md --out-json out/gate.json

publish: env
	$(PUBLISH)

# The published site in headless Chromium: a graph per benchmark, readable default views, no page
# error (rlperf.asvtools.site_check; SITE_JS=/tmp/site-js after scripts/site_js.sh on a box offline).
site-check: env
	$(PY) -m rlperf site check html

preview: env
	$(ASV) preview

clean:
	rm -rf $(VENV) html .asv
