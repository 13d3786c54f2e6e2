"""Fixtures of the end-to-end tests."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from .helpers import DATA


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A fresh copy of the demo workspace."""
    ws = tmp_path / "workspace"
    shutil.copytree(DATA / "workspace", ws)
    return ws
