"""The installed package (as the Docker image and `pip install .` get it), not the source tree (issue 18 item 13).

The wheel is built as pip builds it (an isolated build with the declared ``build-system`` requirements:
``license = "MIT"`` needs setuptools 77 or newer) from a copy of the checkout's files (setuptools writes
``build/`` and ``*.egg-info`` beside the sources), unpacked outside the checkout, and run from there:
the players' rules, the pages' templates and static files and the API's ``openapi.yaml`` are in it, and
``cardtable simulate`` plays the ``greedy`` baseline from ``ai/baselines.py``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from engine.registry import all_games

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    source = tmp_path_factory.mktemp("source")
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"], cwd=ROOT,
                            check=True, capture_output=True, timeout=60).stdout.decode()
    for name in filter(None, listed.split("\0")):
        if (ROOT / name).is_file():  # (a file deleted but not yet committed is still listed)
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    wheels = tmp_path_factory.mktemp("wheels")
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "-q", "-w", str(wheels)],
                   check=True, capture_output=True, timeout=300)
    (wheel,) = wheels.glob("cardtable-*.whl")
    target = tmp_path_factory.mktemp("site")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        archive.extractall(target)
    for game in all_games():
        assert f"engine/rules/{game.info.id}.md" in names
    for name in ("ai/baselines.py", "service/openapi.yaml", "service/templates/rules.html",
                 "service/templates/index.html", "service/static/play/main.js", "service/static/docs.html",
                 "service/static/favicon.svg"):
        assert name in names, name
    return target


def run_installed(target: Path, code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(target)}  # the unpacked wheel first, ahead of the checkout
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120)


def test_simulate_plays_the_greedy_baseline_from_the_installed_package(installed: Path, tmp_path: Path) -> None:
    done = run_installed(installed, "import sys, ai.baselines, cli.main; "
                         "print(ai.baselines.__file__); "
                         "sys.exit(cli.main.main(['simulate', 'three-thirteen', '--games', '1', "
                         "'--seats', 'greedy,random']))", tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines()[0].startswith(str(installed))  # not the checkout's copy
    assert "greedy" in done.stdout and "random" in done.stdout


def test_the_rules_and_pages_come_with_the_installed_package(installed: Path, tmp_path: Path) -> None:
    done = run_installed(installed, "import engine.game, service.play_page as p; "
                         "from engine.registry import all_games; "
                         "import service.blueprints.ops as ops; "
                         "print(engine.game.__file__, p.__file__, ops.spec_path()); "
                         "print(all(g.info.rules.startswith('# ' + g.info.name) for g in all_games()))", tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    files, ok = done.stdout.splitlines()
    assert all(f.startswith(str(installed)) for f in files.split()) and ok == "True"
