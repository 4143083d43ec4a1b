"""Every command of the README, run against a live ``cardtable serve`` (issue 18 item 8).

The README's fenced ``sh`` blocks are run in order as one shell session (as a reader pastes them into one
terminal), with ``http://127.0.0.1:8000`` replaced by a server this test starts on a free port (its own
embedded Redis, its data in a temporary directory) and ``.venv/bin/`` by this interpreter's directory. The
``python`` blocks are run too. Standard input is empty, so the terminal game quits at once.

What is checked: every command succeeds; every ``curl`` answers below 400, unless the lines after it say
otherwise. A command may be followed by its answer as the README shows it::

    curl -s -X POST $B/v1/matches/$M/moves ...
    # -> 409 {"code": "stale_version", "detail": "...", "version": 1, ...}

``# ->`` then an optional status and a JSON sample (continued on lines ``#`` + two spaces or more; ``...``
leaves things out). The real answer must have that status (2xx when none is given) and the sample's shape:
every key of the sample, with a value of the same JSON type, recursively (a list's first element against
the answer's first element), and the same ``code``. Ids, tokens and the AI's numbers change from run to run;
the shape does not.

A block preceded by ``<!-- readme-test: skip (the reason) -->`` is not run: the reason says why (it starts
the server itself, waits for input, or runs for minutes).
"""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.servers import free_port

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
README_BASE = "http://127.0.0.1:8000"
SKIP = re.compile(r"<!--\s*readme-test:\s*skip\b(.*?)-->", re.S)
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```\s*$", re.M | re.S)

CURL_WRAPPER = r"""
# the README's curl, recording each answer's status and body for the test
curl() {
  local out rc=0
  out=$(command curl --max-time 60 "$@" -w '\n%{http_code}') || rc=$?
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 28 ]; then return "$rc"; fi  # 28: a stream cut by --max-time
  local status=${out##*$'\n'}
  out=${out%$'\n'*}
  printf '%s\n' "$out"
  printf '%s %s\n' "$status" "$(printf '%s' "$out" | base64 -w0)" >> "$README_CALLS"
}
"""


@dataclass
class Command:
    text: str
    line: int
    curls: int
    expect: str | None = None  # the "# -> ..." sample, joined


@dataclass
class Block:
    lang: str
    line: int
    code: str
    skip: str | None
    commands: list[Command] = field(default_factory=list)


def strip_comment(line: str) -> str:
    """A shell line without its trailing ``# comment`` (a ``#`` outside quotes, after a blank)."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1] in " \t;"):
            return line[:i]
    return line


def parse_commands(code: str, first_line: int) -> list[Command]:
    commands: list[Command] = []
    lines = code.splitlines()
    i = 0
    while i < len(lines):
        raw = lines[i]
        stripped = raw.strip()
        if stripped.startswith("# ->"):
            if not commands:
                raise AssertionError(f"README line {first_line + i}: an answer with no command before it")
            sample = [stripped[4:].strip()]
            while i + 1 < len(lines) and re.match(r"^#\s{2,}\S", lines[i + 1].strip()):
                i += 1
                sample.append(lines[i].strip()[1:].strip())
            if commands[-1].curls != 1:
                raise AssertionError(f"README line {first_line + i}: an answer after a command with "
                                     f"{commands[-1].curls} curl calls (give each its own line)")
            commands[-1].expect = " ".join(sample)
        elif stripped and not stripped.startswith("#"):
            start = i
            text = strip_comment(raw)
            while text.rstrip().endswith("\\") and i + 1 < len(lines):
                i += 1
                text = text.rstrip()[:-1] + " " + strip_comment(lines[i])
            curls = len(re.findall(r"(?:^|[\s;|&($])curl\s", text))
            commands.append(Command(text.strip(), first_line + start, curls))
        i += 1
    return commands


def readme_blocks() -> list[Block]:
    text = README.read_text(encoding="utf-8")
    blocks = []
    for match in FENCE.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        before = text[:match.start()].rstrip().rsplit("\n", 1)[-1]
        skipped = SKIP.search(before)
        lang = match.group(1)
        block = Block(lang, line, match.group(2), skipped.group(1).strip(" :()") if skipped else None)
        if lang in ("sh", "bash", "shell") and block.skip is None:
            block.commands = parse_commands(block.code, line + 1)
        blocks.append(block)
    return blocks


def parse_sample(sample: str) -> tuple[int | None, Any]:
    """``422 {"code": "x", ...}`` → (422, {"code": "x"}): ``...`` outside strings is left out."""
    status = None
    m = re.match(r"(\d{3})\b\s*", sample)
    if m:
        status, sample = int(m.group(1)), sample[m.end():]
    if not sample:
        return status, None
    out, quote, i = [], False, 0
    while i < len(sample):
        ch = sample[i]
        if quote:
            out.append(ch)
            if ch == "\\":
                out.append(sample[i + 1])
                i += 1
            elif ch == '"':
                quote = False
        elif ch == '"':
            quote = True
            out.append(ch)
        elif sample.startswith("...", i):
            i += 2
        else:
            out.append(ch)
        i += 1
    cleaned = "".join(out)
    for _ in range(3):  # the commas the elisions left behind
        cleaned = re.sub(r",\s*(?=[,}\]])", "", cleaned)
        cleaned = re.sub(r"(?<=[{\[])\s*,", "", cleaned)
    try:
        return status, json.loads(cleaned)
    except json.JSONDecodeError as exc:
        raise AssertionError(f"the README's sample answer is not JSON (after leaving out '...'): {sample}\n"
                             f"{exc}") from None


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    return {str: "string", list: "array", dict: "object"}[type(value)]


def shape_problems(sample: Any, actual: Any, path: str = "") -> list[str]:
    """Where ``actual`` does not have the shape of ``sample`` (keys, JSON types, ``code`` values)."""
    if json_type(sample) != json_type(actual):
        return [f"{path or 'the answer'} is {json_type(actual)} ({json.dumps(actual)[:80]}), "
                f"the README shows {json_type(sample)}"]
    problems = []
    if isinstance(sample, dict):
        for key, value in sample.items():
            if key not in actual:
                problems.append(f"{path}.{key} is missing")
            elif key == "code" and value != actual[key]:
                problems.append(f"{path}.code is {actual[key]!r}, the README shows {value!r}")
            else:
                problems += shape_problems(value, actual[key], f"{path}.{key}")
    elif isinstance(sample, list) and sample:
        if not actual:
            problems.append(f"{path} is empty, the README shows items")
        else:
            problems += shape_problems(sample[0], actual[0], f"{path}[0]")
    return problems


def _get(url: str) -> int:
    with urllib.request.urlopen(url, timeout=5) as r:
        return int(r.status)


@pytest.fixture(scope="module")
def live_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``cardtable serve`` on a free port, with its own embedded Redis (data in a temporary directory)."""
    port = free_port()
    env = {k: v for k, v in os.environ.items()
           if k not in ("REDIS_URL", "PROMETHEUS_MULTIPROC_DIR", "CARDTABLE_BIND")}
    env.update({"XDG_DATA_HOME": str(tmp_path_factory.mktemp("data")), "PYTHONPATH": str(ROOT),
                "REQUEST_LOG": "false"})
    proc = subprocess.Popen([sys.executable, "-m", "cli.main", "serve", "--port", str(port), "--workers", "1"],
                            cwd=tmp_path_factory.mktemp("cwd"), env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if _get(base + "/readyz") == 200:
                    break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                err = proc.stderr.read().decode() if proc.stderr and proc.poll() is not None else ""
                raise RuntimeError(f"cardtable serve did not come up: {err}")
            time.sleep(0.2)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def localize(code: str, base: str) -> str:
    return code.replace(README_BASE, base).replace(".venv/bin/", f"{Path(sys.executable).parent}/")


def test_the_readme_has_runnable_blocks_and_says_why_others_are_not_run() -> None:
    blocks = readme_blocks()
    shell = [b for b in blocks if b.lang in ("sh", "bash", "shell")]
    assert sum(c.curls for b in shell for c in b.commands) >= 10, "the API tour should be run"
    assert sum(1 for b in shell for c in b.commands if c.expect) >= 8, "the tour should show answers"
    for block in blocks:
        if block.skip is not None:
            assert len(block.skip) > 5, f"README line {block.line}: say why the block is not run"


def test_every_shell_command_of_the_readme_against_a_live_service(live_service: str, tmp_path: Path) -> None:
    blocks = [b for b in readme_blocks() if b.lang in ("sh", "bash", "shell") and b.skip is None]
    calls_file = tmp_path / "calls"
    calls_file.touch()
    script = ["set -eo pipefail", CURL_WRAPPER]
    for block in blocks:
        script.append(f"echo '=== README line {block.line}' >&2")
        script.append(localize(block.code, live_service))
    env = {**os.environ, "README_CALLS": str(calls_file),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(["bash", "-c", "\n".join(script)], cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"a README command failed ({done.returncode}):\n{done.stderr[-3000:]}"

    calls = [line.split(" ", 1) for line in calls_file.read_text().splitlines()]
    commands = [c for b in blocks for c in b.commands]
    expected_calls = sum(c.curls for c in commands)
    assert len(calls) == expected_calls, f"{len(calls)} curl calls ran, the README's commands hold {expected_calls}"
    problems = []
    answers = iter(calls)
    for command in commands:
        for _ in range(command.curls):
            status_text, encoded = next(answers)
            status = int(status_text)
            body = base64.b64decode(encoded).decode(errors="replace") if encoded.strip() else ""
            where = f"README line {command.line}: {command.text[:90]}"
            if command.expect is None:
                if status >= 400:
                    problems.append(f"{where}\n  answered {status}: {body[:300]}")
                continue
            want_status, sample = parse_sample(command.expect)
            if (want_status is None and not 200 <= status < 300) or (want_status and status != want_status):
                problems.append(f"{where}\n  answered {status}, the README shows {want_status or '2xx'}: "
                                f"{body[:300]}")
                continue
            if sample is not None:
                try:
                    actual = json.loads(body)
                except json.JSONDecodeError:
                    problems.append(f"{where}\n  answered no JSON: {body[:200]}")
                    continue
                problems += [f"{where}\n  {p}" for p in shape_problems(sample, actual)]
    assert not problems, "\n".join(problems)


def test_every_python_block_of_the_readme_runs() -> None:
    blocks = [b for b in readme_blocks() if b.lang == "python" and b.skip is None]
    assert blocks
    for block in blocks:
        done = subprocess.run([sys.executable, "-c", block.code], cwd=ROOT, capture_output=True, text=True,
                              timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert done.returncode == 0, f"README line {block.line}:\n{done.stderr[-2000:]}"


def test_the_sample_answers_are_read_as_their_shape() -> None:
    status, sample = parse_sample('422 {"code": "illegal_move", "detail": "you have ... (R3)", ...}')
    assert status == 422 and sample == {"code": "illegal_move", "detail": "you have ... (R3)"}
    assert parse_sample('{"moves": [{"type": "draw", ...}, ...], "version": 0}') == (
        None, {"moves": [{"type": "draw"}], "version": 0})
    assert parse_sample("[...]") == (None, [])
    assert shape_problems({"a": [{"b": 1}], "code": "x"}, {"a": [{"b": 2.5, "c": 0}], "code": "x", "d": 1}) == []
    assert shape_problems({"a": 1}, {"a": "1"}) == ['.a is string ("1"), the README shows number']
    assert shape_problems({"code": "x"}, {"code": "y"}) == [".code is 'y', the README shows 'x'"]
    assert shape_problems({"a": [1]}, {"a": []}) == [".a is empty, the README shows items"]
    commands = parse_commands("B=x\ncurl -s $B/a \\\n  -d '{}'   # a comment\n# -> 201 {\"id\": 1,\n#     \"x\": 2}\n"
                              "curl -s $B/b; curl -s $B/c\n", 10)
    assert [(c.line, c.curls, c.expect) for c in commands] == [
        (10, 0, None), (11, 1, '201 {"id": 1, "x": 2}'), (15, 2, None)]
