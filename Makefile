# The two commands of the README: `make serve` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: serve test install lint browser nginx bench-smoke

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

# tests/service/test_browser.py drives Debian's chromium headless (never a downloaded browser build)
browser:
	@[ -x /usr/bin/chromium ] || (apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium)

# tests/service/test_deploy_nginx.py runs Debian's nginx (deploy/nginx.conf, the reference deployment); without
# root it cannot be installed, and those tests say they did not run
nginx:
	@[ -x /usr/sbin/nginx ] || (apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q nginx) \
		|| echo "nginx could not be installed: the reference deployment's tests will not run"

test: lint browser nginx
	$(BIN)/python -m pytest

bench-smoke: install
	$(BIN)/python bench/solver.py --smoke --json
	$(BIN)/python bench/playouts.py --smoke --json
	$(BIN)/python bench/api_load.py --smoke --json
	$(BIN)/python bench/abuse.py --smoke --json
	$(BIN)/python bench/ai_speed.py --smoke --json
	$(BIN)/python bench/ai_strength.py --smoke --json
	$(BIN)/python bench/ai_ab.py --smoke --json --variants base meld_bonus=0
