"""The sandbox as a security boundary: the escape corpus (``sandbox_corpus.ESCAPES``)
run through the shell tool as root and as an unprivileged user — every attempt fails,
the host's canary tree and settings stay as they were, no secret reaches an output, and
the workspace does not change without a confirmation."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from artoo.actors.tools import probe

from .sandbox_corpus import ESCAPES, run_escapes
from .unprivileged import as_nobody

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the sandbox needs Linux")


def _check(result: dict[str, object]) -> None:
    assert result["ran"] == len(ESCAPES) >= 60
    assert result["failures"] == []


@pytest.mark.slow
def test_every_escape_fails_as_the_user_running_the_tests(tmp_path: Path) -> None:
    assert probe() is None
    _check(run_escapes(tmp_path))


@pytest.mark.slow
def test_every_escape_fails_as_an_unprivileged_user() -> None:
    result = as_nobody("sandbox_corpus:run_escapes")
    assert isinstance(result, dict)
    _check(result)
