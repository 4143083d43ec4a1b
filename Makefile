# The two commands of the README: `make serve` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: serve test install lint browser nginx screenshot bench-smoke

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.installed: $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $@

install: $(VENV)/.installed

serve: install
	$(BIN)/cardtable serve

lint: install
	$(BIN)/ruff check engine ai service cli tests bench
	$(BIN)/mypy engine ai service cli

# $(call debian_package,PACKAGE,BINARY,TESTS): install Debian's PACKAGE with apt (as root) unless BINARY exists.
# Without root (or apt) TESTS are reported NOT RUN at the end of `make test` and everything else runs; under CI
# (CI set) a package that cannot be had is an error.
define debian_package
	@if [ -x "$(2)" ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "make: installing Debian's $(1) for $(3) (apt-get as root)"; \
	  if apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $(1); then exit 0; fi; \
	  echo "make: *** could not install $(1)"; \
	else \
	  echo "make: *** no $(2), and installing it needs root (apt-get install $(1))"; \
	fi; \
	if [ -n "$$CI" ]; then echo "make: *** CI runs $(3): $(1) is required"; exit 1; fi; \
	echo "make: *** $(3) will be reported NOT RUN; everything else runs"
endef

# tests/service/test_browser.py drives Debian's chromium headless (never a downloaded browser build; about
# 114 packages).
browser:
	$(call debian_package,chromium,$${CARDTABLE_CHROMIUM:-/usr/bin/chromium},the browser tests)

# tests/service/test_deploy_nginx.py runs Debian's nginx in front of the service (deploy/nginx.conf, the reference
# deployment).
nginx:
	$(call debian_package,nginx,/usr/sbin/nginx,the reference deployment's tests)

test: lint browser nginx
	$(BIN)/python -m pytest

# regenerate the README's screenshots (docs/screenshot-play.png, docs/screenshot-waiting-room.png) and the others in out/
screenshot: install browser
	CARDTABLE_SCREENSHOTS=1 $(BIN)/python -m pytest tests/service/test_browser.py tests/service/test_browser_friends.py

# Each benchmark's smoke run is bounded: past SMOKE_LIMIT seconds it gets SIGABRT, so Python's faulthandler prints
# where every thread was (the process group timeout made, the servers the benchmark started included, goes with it),
# and the run fails with that instead of silently eating CI's time.
SMOKE_LIMIT ?= 900
define smoke
	@ulimit -c 0; start=$$(date +%s); echo "$(BIN)/python bench/$(1) --smoke --json"; \
	PYTHONFAULTHANDLER=1 timeout -s ABRT -k 30 $(SMOKE_LIMIT) $(BIN)/python bench/$(1) --smoke --json; rc=$$?; \
	echo "bench-smoke: bench/$(firstword $(1)) exit $$rc after $$(( $$(date +%s) - start )) s" >&2; exit $$rc
endef

bench-smoke: install
	$(call smoke,solver.py)
	$(call smoke,playouts.py)
	$(call smoke,api_load.py)
	$(call smoke,ai_tier.py)
	$(call smoke,abuse.py)
	$(call smoke,ai_speed.py)
	$(call smoke,ai_memory.py)
	$(call smoke,ai_strength.py)
	$(call smoke,ai_strength.py --pairings levels)
	$(call smoke,ai_ab.py --variants base meld_bonus=0 reveal=true)
	$(call smoke,ls_belief.py)
