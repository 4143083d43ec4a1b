"""Every example in the engine's docstrings runs (the rules' examples written next to the code)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import engine

MODULES = sorted(m.name for m in pkgutil.walk_packages(engine.__path__, "engine."))


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name: str) -> None:
    failures, _ = doctest.testmod(importlib.import_module(name))
    assert failures == 0
