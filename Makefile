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

bench-smoke: install
	$(BIN)/python bench/solver.py --smoke --json
	$(BIN)/python bench/playouts.py --smoke --json
	$(BIN)/python bench/api_load.py --smoke --json
	$(BIN)/python bench/ai_tier.py --smoke --json
	$(BIN)/python bench/abuse.py --smoke --json
	$(BIN)/python bench/ai_speed.py --smoke --json
	$(BIN)/python bench/ai_memory.py --smoke --json
	$(BIN)/python bench/ai_strength.py --smoke --json
	$(BIN)/python bench/ai_ab.py --smoke --json --variants base meld_bonus=0
