# The two commands of the README: `make bench` (the CPU suite, published) and `make test`.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.rlperf-installed
ASV := $(PY) -m asv
# asv publish, then rlperf's default view of each graph page (rlperf.asvtools.site: readable lines,
# the legend beside the plot). asv.conf.json's html_dir is html.
PUBLISH = $(ASV) publish && $(PY) -m rlperf site defaults html
MACHINE ?= $(shell $(PY) -m rlperf machine --print-name 2>/dev/null)
# `make bench BENCH=bench_env` runs one suite; any asv --bench regex works.
BENCH ?=
BASE ?= main
ASV_RUN = $(ASV) run --python=same --launch-method spawn --show-stderr \
  --set-commit-hash $$(git rev-parse HEAD) --machine "$(MACHINE)"

.PHONY: env test bench bench-replay bench-env bench-full bench-inner gate publish site-check preview clean

env: $(STAMP)

$(STAMP): pyproject.toml scripts/bootstrap.sh
	VENV=$(VENV) scripts/bootstrap.sh
	touch $@

test: env
	$(PY) -m pytest

# The CPU suite once per point (--quick), stored under results/asv/$(MACHINE)/ for HEAD, then the site.
# Whatever suites exist run; GPU points skip themselves on a CPU box. A failed benchmark still
# publishes, then fails the target with asv's status.
bench: env
	@$(PY) -m rlperf machine --write --name "$(MACHINE)"
	@if ! ls benchmarks/bench_*.py >/dev/null 2>&1; then \
	  echo "bench: no suites in benchmarks/ yet (bench_*.py); nothing to run"; exit 0; fi; \
	if [ ! -f benchmarks/__init__.py ]; then \
	  echo "bench: benchmarks/__init__.py is missing (asv needs the folder to be a package)"; exit 1; fi; \
	status=0; $(ASV_RUN) --quick $(if $(BENCH),--bench "$(BENCH)") || status=$$?; \
	$(PUBLISH) && \
	echo "results: results/asv/$(MACHINE)/   site: html/index.html" && \
	echo "view:    $(ASV) preview   (or: make preview; make site-check reads it in headless Chromium)"; \
	exit $$status

bench-replay: BENCH = ^bench_replay
bench-replay: bench

bench-env: BENCH = ^bench_env
bench-env: bench

# Full statistics (no --quick, samples recorded): what the gate compares. Minutes to hours.
bench-full: env
	@$(PY) -m rlperf machine --write --name "$(MACHINE)"
	$(ASV_RUN) --record-samples $(if $(BENCH),--bench "$(BENCH)")

# The inner loop: the same cases under pytest-benchmark (see docs/README-suite.md).
bench-inner: env
	$(PY) -m pytest tests/bench --benchmark-only --benchmark-enable

# Gate HEAD against $(BASE) on this machine as CI does: both measured now, interleaved, each in its own
# worktree, under gate.toml's profile for this host (gpu where a CUDA device is visible, else xeon;
# PROFILE=NAME picks one). QUICK=1: a fast look (1 pass, no paired sampling), labelled not what CI runs.
PROFILE ?=
QUICK ?=
gate: env
	$(PY) -m rlperf gate --run --base $(BASE) --head HEAD --machine "$(MACHINE)" --results-dir results/asv \
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
