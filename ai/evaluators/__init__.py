"""One evaluator module per game; importing this package registers every evaluator whose game exists.

A game module that is not there (yet) just leaves its game on the generic fallback evaluator.
"""

from __future__ import annotations

import importlib

_MODULES = ("rummy", "least_score", "less_than_three", "contract_rummy")

for _name in _MODULES:
    try:
        importlib.import_module(f"ai.evaluators.{_name}")
    except ModuleNotFoundError as exc:  # the game's engine module (or ours) is not written yet
        if not (exc.name or "").startswith(("engine.", "ai.evaluators.")):
            raise
