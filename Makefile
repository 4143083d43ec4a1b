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

# tests/service/test_browser.py drives Debian's chromium headless (never a downloaded browser build).
# As root, install it with apt (about 114 packages); otherwise the browser tests are reported NOT RUN at the
# end of `make test` and everything else runs. Under CI (CI set) a browser that cannot be had is an error.
browser:
	@if [ -x "$${CARDTABLE_CHROMIUM:-/usr/bin/chromium}" ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "make: installing Debian's chromium for the browser tests (apt-get as root, about 114 packages)"; \
	  if apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium; then exit 0; fi; \
	  echo "make: *** could not install chromium"; \
	else \
	  echo "make: *** no /usr/bin/chromium, and installing it needs root (apt-get install chromium)"; \
	fi; \
	if [ -n "$$CI" ]; then echo "make: *** CI runs the browser tests: chromium is required"; exit 1; fi; \
	echo "make: *** the browser tests will be reported NOT RUN; everything else runs"

# tests/service/test_deploy_nginx.py runs Debian's nginx in front of the service (deploy/nginx.conf, the reference
# deployment). As root, install it with apt; otherwise those tests are reported NOT RUN at the end of `make test`
# and everything else runs. Under CI (CI set) an nginx that cannot be had is an error.
nginx:
	@if [ -x /usr/sbin/nginx ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "make: installing Debian's nginx for the reference deployment's tests (apt-get as root)"; \
	  if apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q nginx; then exit 0; fi; \
	  echo "make: *** could not install nginx"; \
	else \
	  echo "make: *** no /usr/sbin/nginx, and installing it needs root (apt-get install nginx)"; \
	fi; \
	if [ -n "$$CI" ]; then echo "make: *** CI runs the reference deployment's tests: nginx is required"; exit 1; fi; \
	echo "make: *** the nginx tests will be reported NOT RUN; everything else runs"

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
	$(BIN)/python bench/ai_strength.py --smoke --json
	$(BIN)/python bench/ai_ab.py --smoke --json --variants base meld_bonus=0
