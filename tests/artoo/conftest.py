"""Fixtures of the end-to-end tests."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest
from rich.console import Console

from artoo.demo import run_demo

from .helpers import DATA


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A fresh copy of the demo workspace."""
    ws = tmp_path / "workspace"
    shutil.copytree(DATA / "workspace", ws)
    return ws


@pytest.fixture(scope="session")
def demo_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One store of ``artoo demo`` (its five scenarios) for every test that only reads it."""
    store = tmp_path_factory.mktemp("demo") / "store"
    assert run_demo(store, Console(file=io.StringIO()), clean=True) == 0
    return store


@pytest.fixture
def store(demo_store: Path, tmp_path: Path) -> Path:
    """A copy of the demo store that a test may change."""
    shutil.copytree(demo_store, tmp_path / "store")
    return tmp_path / "store"
