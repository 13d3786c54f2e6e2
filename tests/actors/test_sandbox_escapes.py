"""The sandbox as a security boundary: the escape corpus (``sandbox_corpus.ESCAPES``) and
the attempts on what is applied (``APPLY_ATTACKS``) run through the shell tool as root and
as an unprivileged user — every attempt fails, the host's canary tree and settings stay
as they were, no secret reaches an output, nothing outlives its call, and the workspace
does not change without a confirmation; an upper layer changed between observation and
apply is never applied (``run_swaps``); no file tool tells whether a host file exists
(``run_probes``)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from artoo.actors.tools import probe

from .sandbox_corpus import APPLY_ATTACKS, ESCAPES, run_escapes, run_probes, run_swaps
from .unprivileged import as_nobody

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the sandbox needs Linux")


def _check(result: dict[str, object]) -> None:
    assert result["ran"] == len(ESCAPES) + len(APPLY_ATTACKS)
    assert len(ESCAPES) >= 60 and len(APPLY_ATTACKS) >= 20
    assert result["failures"] == []


RUNS = {"run_escapes": run_escapes, "run_swaps": run_swaps, "run_probes": run_probes}


@pytest.mark.slow
def test_every_escape_fails_as_the_user_running_the_tests(tmp_path: Path) -> None:
    assert probe() is None
    _check(run_escapes(tmp_path))


@pytest.mark.slow
def test_every_escape_fails_as_an_unprivileged_user() -> None:
    result = as_nobody("sandbox_corpus:run_escapes")
    assert isinstance(result, dict)
    _check(result)


@pytest.mark.parametrize("run", ["run_swaps", "run_probes"])
def test_a_changed_upper_layer_and_a_probe_through_links_fail_as_the_test_user(
    run: str, tmp_path: Path
) -> None:
    assert probe() is None
    result = RUNS[run](tmp_path)
    assert result["ran"] and result["failures"] == []


@pytest.mark.parametrize("run", ["run_swaps", "run_probes"])
def test_a_changed_upper_layer_and_a_probe_through_links_fail_as_an_unprivileged_user(
    run: str,
) -> None:
    result = as_nobody(f"sandbox_corpus:{run}")
    assert isinstance(result, dict)
    assert result["ran"] and result["failures"] == []
