# The two commands of the README: `make bench` (the CPU suite, published) and `make test`.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.rlperf-installed
ASV := $(PY) -m asv
MACHINE ?= $(shell $(PY) -m rlperf machine --print-name 2>/dev/null)

.PHONY: env test bench bench-replay bench-env publish clean

env: $(STAMP)

$(STAMP): pyproject.toml scripts/bootstrap.sh
	VENV=$(VENV) scripts/bootstrap.sh
	touch $@

test: env
	$(PY) -m pytest

bench: env
	$(PY) -m rlperf machine --write
	$(ASV) run --python=same --quick --launch-method spawn --show-stderr \
	  --set-commit-hash $$(git rev-parse HEAD) --machine "$$($(PY) -m rlperf machine --print-name)"
	$(ASV) publish
	@echo "results: results/$$($(PY) -m rlperf machine --print-name)/   site: html/index.html"
	@echo "view:    $(ASV) preview   (or open html/index.html)"

clean:
	rm -rf $(VENV) html .asv
