"""``cardtable simulate``: tournaments between the AI and the baselines, run as a user would run them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ai.tournament import wilson_interval

ROOT = Path(__file__).resolve().parents[2]
SHORT = ["-o", "max_turns_per_round=10"]


def cardtable(*args: str) -> subprocess.CompletedProcess[str]:
    script = Path(sys.executable).parent / "cardtable"
    command = [str(script)] if script.exists() else [sys.executable, "-m", "cli.main"]
    return subprocess.run([*command, "simulate", *args], cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_wilson_interval_known_values() -> None:
    low, high = wilson_interval(5, 10)
    assert (round(low, 4), round(high, 4)) == (0.2366, 0.7634)
    low, high = wilson_interval(0, 20)
    assert low == 0.0 and round(high, 4) == 0.1611
    low, high = wilson_interval(20, 20)
    assert round(low, 4) == 0.8389 and high == 1.0


def test_a_tournament_with_json_summary_and_plot(tmp_path: Path) -> None:
    out = tmp_path / "scores.png"
    result = cardtable("threezies", "--games", "6", "--seats", "ai:1,greedy,random", "--seed", "40",
                       *SHORT, "--json", "--plot", str(out))
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["game"] == "threezies" and summary["games"] == 6 and summary["rotate"] is True
    players = summary["players"]
    assert [p["player"] for p in players] == ["ai:1", "greedy", "random"]
    assert sum(p["wins"] for p in players) == pytest.approx(6)  # shared wins are split
    assert sum(p["moves"] for p in players) == summary["moves"] > 6 * 8 * 2
    for p in players:
        low, high = p["win_rate_ci95"]
        assert 0 <= low <= p["win_rate"] <= high <= 1
        assert p["mean_score"] is not None and p["mean_score"] >= 0
        assert p["ms_per_move_mean"] > 0 and p["ms_per_move_median"] > 0
    assert "6/6" in result.stderr  # the progress bar
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    import matplotlib.image

    image = matplotlib.image.imread(out)
    assert image.shape[0] > 300 and image.shape[1] > 800


def test_same_seed_same_tournament_and_a_readable_table() -> None:
    first = cardtable("three-thirteen", "--games", "2", "--seats", "greedy,random", "--seed", "7", *SHORT,
                      "--json", "--quiet")
    again = cardtable("three-thirteen", "--games", "2", "--seats", "greedy,random", "--seed", "7", *SHORT,
                      "--json", "--quiet")
    assert first.returncode == 0 and again.returncode == 0, first.stderr + again.stderr
    a, b = json.loads(first.stdout), json.loads(again.stdout)
    assert [(p["wins"], p["mean_score"], p["moves"]) for p in a["players"]] == \
        [(p["wins"], p["mean_score"], p["moves"]) for p in b["players"]]
    assert first.stderr == ""  # --quiet: no progress bar
    table = cardtable("three-thirteen", "--games", "2", "--seats", "greedy,random", "--seed", "7", *SHORT, "--quiet")
    assert table.returncode == 0, table.stderr
    lines = table.stdout.splitlines()
    assert lines[0].startswith("three-thirteen: 2 games, deals 7..7, seats rotate")  # one deal, seats swapped
    assert all(word in lines[1] for word in ("win rate", "95% CI", "margin", "mean score", "ms/move"))
    assert lines[3].split()[:2] == ["1", "greedy"] and lines[4].split()[:2] == ["2", "random"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["three-thirteen", "--seats", "ai:9,random"], "AI levels are"),
        (["three-thirteen", "--seats", "clever,random"], "is not a player"),
        (["threezies", "--seats", "random,random,random,random"], "2-3 players"),
        (["three-thirteen", "--games", "0"], "at least 1"),
        (["three-thirteen", "--seats", "random,random", "-o", "decks=9"], "decks"),
    ],
)
def test_bad_arguments_are_reported(args: list[str], message: str) -> None:
    result = cardtable(*args)
    assert result.returncode == 2
    assert message in result.stderr
