"""The ``cardtable`` command run as a user runs it: installed script (or ``python -m cli.main``) on a terminal."""

from __future__ import annotations

import signal
import sys
from pathlib import Path
from typing import Any

import pexpect


def cardtable_command() -> list[str]:
    script = Path(sys.executable).parent / "cardtable"
    return [str(script)] if script.exists() else [sys.executable, "-m", "cli.main"]


def _interruptible() -> None:
    # a test run started in the background of a script (nohup, `&`) has SIGINT ignored, and children inherit
    # that; on a terminal Ctrl-C must reach the command as it does a user's
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def spawn_cardtable(args: list[str], **kwargs: Any) -> pexpect.spawn:
    """``cardtable ARGS`` on a pseudo-terminal (``kwargs``: pexpect's, e.g. env, cwd, timeout)."""
    command = [*cardtable_command(), *args]
    return pexpect.spawn(command[0], command[1:], encoding="utf-8", preexec_fn=_interruptible, **kwargs)
