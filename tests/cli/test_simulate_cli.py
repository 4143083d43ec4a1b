"""``cardtable simulate``: tournaments between the AI and the baselines, run as a user would run them."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
from pathlib import Path

import pexpect
import pytest

from ai.tournament import wilson_interval
from tests.cli.terminal import cardtable_command, spawn_cardtable

ROOT = Path(__file__).resolve().parents[2]
SHORT = ["-o", "max_turns_per_round=10"]


def cardtable(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*cardtable_command(), "simulate", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=600)


def spawn(*args: str, cwd: Path = ROOT) -> pexpect.spawn:
    """``cardtable simulate`` on a pseudo-terminal, as a person runs it (the progress line is rewritten)."""
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "160", "LINES": "50", "PYTHONIOENCODING": "utf-8"}
    return spawn_cardtable(["simulate", *args], cwd=str(cwd), env=env, timeout=120, dimensions=(50, 160))


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


def test_the_plot_goes_into_folders_that_do_not_exist_yet(tmp_path: Path) -> None:
    # issue 18 item 4: the README's own `--plot out/scores.png` on a fresh clone
    result = cardtable("threezies", "--games", "2", "--seats", "expert,greedy", *SHORT, "--quiet",
                       "--plot", "out/deeper/scores.png", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "out" / "deeper" / "scores.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "plot: out/deeper/scores.png" in result.stdout


def test_the_progress_estimates_the_time_left_from_the_first_game_and_never_shows_a_question_mark() -> None:
    result = cardtable("three-thirteen", "--games", "4", "--seats", "expert,greedy", *SHORT)
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    assert lines[0] == "three-thirteen: 0/4 games; the time left is estimated when the first game ends"
    assert lines[1].startswith("three-thirteen: 1/4 games, 0:0") and "left" in lines[1] and "a game)" in lines[1]
    assert re.search(r"\| expert [01]\.\d\d greedy [01]\.\d\d$", lines[1])  # the win rates so far
    assert lines[-1].startswith("three-thirteen: 4/4 games") and "about 0:00 left" in lines[-1]
    assert "?" not in result.stderr


def test_workers_play_the_same_games_in_parallel() -> None:
    args = ("three-thirteen", "--games", "6", "--seats", "expert,greedy,random", "--seed", "3", *SHORT, "--json",
            "--quiet")
    one, two = cardtable(*args), cardtable(*args, "--workers", "2")
    assert one.returncode == 0 and two.returncode == 0, one.stderr + two.stderr
    a, b = json.loads(one.stdout), json.loads(two.stdout)
    assert a["workers"] == 1 and b["workers"] == 2
    keep = ("player", "wins", "win_rate", "margin", "margin_ci95", "mean_score", "score_sd", "moves")
    assert [{k: p[k] for k in keep} for p in a["players"]] == [{k: p[k] for k in keep} for p in b["players"]]


@pytest.mark.parametrize("workers", ["1", "2"])
def test_ctrl_c_prints_the_table_of_the_games_played_without_a_traceback(workers: str) -> None:
    # far more games than are played before the interrupt lands, however busy the machine: a short run
    # could finish between the first game's line and the Ctrl-C
    child = spawn("three-thirteen", "--games", "2000", "--seats", "expert,greedy", "--workers", workers)
    child.logfile_read = screen = io.StringIO()
    try:
        child.expect(r"\b1/2000 games", timeout=300)
        child.sendintr()
        child.expect(r"stopped after (\d+) of 2000 games: the table counts those")
        done = int(child.match.group(1))
        assert 1 <= done < 2000
        child.expect(rf"three-thirteen: {done} games of 2000 \(stopped\)")
        child.expect(r" 1  expert ")
        child.expect(r" 2  greedy ")
        child.expect(pexpect.EOF)
        assert "Traceback" not in screen.getvalue() and "KeyboardInterrupt" not in screen.getvalue()
    finally:
        child.close()
    assert child.exitstatus == 130


@pytest.mark.parametrize("sub", ["simulate", "play"])
def test_help_is_plain_text(sub: str) -> None:
    # issue 18 item 13: no raw ``double backticks`` or :mod: roles in the command's help
    result = subprocess.run([*cardtable_command(), sub, "--help"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0
    assert "``" not in result.stdout and ":mod:" not in result.stdout
    if sub == "simulate":
        assert "expert" in result.stdout and "--workers" in result.stdout and "Ctrl-C" in result.stdout
