"""Shared fixtures and hooks for the tests.

Two session-wide checks live here:

* a test suite must leave the work tree as it found it (issue 18 item 1): the files git sees as changed or
  new are fingerprinted before and after the run, and a difference fails the run, naming the files
  (``make screenshot`` writes the README's screenshot on purpose, with ``CARDTABLE_SCREENSHOTS=1``);
* tests that could not run for want of a browser (or of nginx) say so loudly at the end (issue 18 item 7).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

settings.register_profile("ci", deadline=None, print_blob=True)
settings.register_profile("dev", deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")

ROOT = Path(__file__).resolve().parents[1]
NOT_RUN = "BROWSER TESTS NOT RUN"
NGINX_NOT_RUN = "NGINX TESTS NOT RUN"
NOT_RUN_MARK = "TESTS NOT RUN"  # a skip whose reason holds it is listed in the banner at the end
_work_tree_before: dict[str, str] | None = None


def work_tree_changes() -> dict[str, str] | None:
    """Each file git reports as modified, deleted or untracked (not ignored), with a hash of its content;
    None outside a git work tree."""
    try:
        listed = subprocess.run(["git", "ls-files", "--modified", "--deleted", "--others", "--exclude-standard",
                                 "-z"], cwd=ROOT, capture_output=True, timeout=30, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    changes = {}
    for name in sorted(set(filter(None, listed.decode().split("\0")))):
        path = ROOT / name
        changes[name] = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "deleted"
    return changes


def pytest_sessionstart(session: pytest.Session) -> None:
    global _work_tree_before
    if not hasattr(session.config, "workerinput"):  # once, in the controlling process
        _work_tree_before = work_tree_changes()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _work_tree_before is None or os.environ.get("CARDTABLE_SCREENSHOTS"):
        return
    after = work_tree_changes()
    if after is None:
        return
    touched = sorted(name for name in set(after) | set(_work_tree_before)
                     if after.get(name) != _work_tree_before.get(name))
    if touched:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_sep("=", "THE TESTS CHANGED THE WORK TREE", red=True, bold=True)
            for name in touched:
                reporter.write_line(f"  {name}")
            reporter.write_line("  tests must write to temporary directories (tmp_path), never into the checkout")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any) -> None:
    reasons = set()
    for report in terminalreporter.stats.get("skipped", []):
        longrepr = getattr(report, "longrepr", None)
        if isinstance(longrepr, tuple) and NOT_RUN_MARK in str(longrepr[2]):
            reasons.add(str(longrepr[2]).removeprefix("Skipped: "))
    if reasons:
        count = sum(1 for r in terminalreporter.stats.get("skipped", []) if NOT_RUN_MARK in str(r.longrepr))
        terminalreporter.write_sep("!", f"{count} {NOT_RUN_MARK}", red=True, bold=True)
        for reason in sorted(reasons):
            terminalreporter.write_line(reason, red=True, bold=True)
        untested = [what for mark, what in ((NOT_RUN, "the browser client (/play)"),
                                            (NGINX_NOT_RUN, "the reference deployment (nginx)"))
                    if any(mark in reason for reason in reasons)]
        verb = "were" if len(untested) > 1 else "was"
        terminalreporter.write_line(f"Everything else ran. {' and '.join(untested).capitalize()} {verb} NOT tested "
                                    "in this run.", red=True, bold=True)
