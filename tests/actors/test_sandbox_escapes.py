"""The sandbox as a security boundary: the escape corpus (``sandbox_corpus.ESCAPES``) and
the attempts on what is applied (``APPLY_ATTACKS``) run through the shell tool as root and
as an unprivileged user — every attempt fails, the host's canary tree and settings stay
as they were, no secret reaches an output, and the workspace does not change without a
confirmation; an upper layer changed between observation and apply is never applied
(``run_swaps``); no file tool tells whether a host file exists (``run_probes``)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import pytest

from artoo.actors.tools import probe

from .sandbox_corpus import APPLY_ATTACKS, ESCAPES, run_escapes, run_probes, run_swaps

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the sandbox needs Linux")
REPO = Path(__file__).resolve().parents[2]
NOBODY = 65534


def _check(result: dict[str, object]) -> None:
    assert result["ran"] == len(ESCAPES) + len(APPLY_ATTACKS)
    assert len(ESCAPES) >= 60 and len(APPLY_ATTACKS) >= 20
    assert result["failures"] == []


RUNS = {"run_escapes": run_escapes, "run_swaps": run_swaps, "run_probes": run_probes}


@pytest.mark.slow
def test_every_escape_fails_as_the_user_running_the_tests(tmp_path: Path) -> None:
    assert probe() is None
    _check(run_escapes(tmp_path))


def _as_nobody(base: Path, run: str = "run_escapes") -> subprocess.CompletedProcess[str]:
    """``run(base)`` (a function of ``sandbox_corpus``) in a process of uid/gid 65534,
    with an interpreter that user may run (this one, else the system's of the same
    version) and this environment's packages; exit code 3 when that interpreter cannot
    run the sandbox's helper."""
    purelib = sysconfig.get_paths()["purelib"]
    code = (
        "import json, os, site, sys\n"
        f"site.addsitedir({purelib!r}); sys.path.insert(0, {str(REPO)!r})\n"
        "if not os.access(sys.executable, os.X_OK): sys.exit(3)\n"
        "from pathlib import Path\n"
        f"from tests.actors.sandbox_corpus import {run}\n"
        f"print(json.dumps({run}(Path({str(base)!r}))))\n"
    )
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    result = subprocess.CompletedProcess[str]([], 3, "", "no interpreter")
    for python in (sys.executable, f"/usr/bin/{version}", f"/usr/local/bin/{version}"):
        if not os.path.exists(python):
            continue
        result = subprocess.run(
            [
                "setpriv",
                f"--reuid={NOBODY}",
                f"--regid={NOBODY}",
                "--clear-groups",
                python,
                "-c",
                code,
            ],
            capture_output=True,
            text=True,
            cwd="/",
            env={"PATH": os.defpath, "HOME": str(base), "LANG": "C.UTF-8"},
            timeout=600,
        )
        if result.returncode not in (3, 126, 127) and "Permission denied" not in result.stderr:
            break  # this interpreter ran the corpus (or failed at it: reported below)
    return result


def _nobody(run: str) -> dict[str, object]:
    """What ``run`` gives when run as an unprivileged user (skips where it cannot be)."""
    if os.getuid() != 0:  # the tests themselves run unprivileged: the test above is it
        pytest.skip("the test process is unprivileged already (see the test above)")
    if shutil.which("setpriv") is None:
        pytest.skip("no setpriv to run the corpus as an unprivileged user")
    base = Path(tempfile.mkdtemp(prefix="artoo-nobody-"))
    try:
        os.chmod(base, 0o755)
        os.chown(base, NOBODY, NOBODY)
        result = _as_nobody(base, run)
        if result.returncode == 3 or "ModuleNotFoundError" in result.stderr:
            pytest.skip(
                "this environment's interpreter or packages are not readable by an "
                f"unprivileged user: {result.stderr.strip()[-200:]}"
            )
        assert result.returncode == 0, result.stderr[-2000:]
        out: dict[str, object] = json.loads(result.stdout.strip().splitlines()[-1])
        return out
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.slow
def test_every_escape_fails_as_an_unprivileged_user() -> None:
    _check(_nobody("run_escapes"))


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
    result = _nobody(run)
    assert result["ran"] and result["failures"] == []
