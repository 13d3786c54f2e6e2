"""The sandbox as a security boundary: the escape corpus (``sandbox_corpus.ESCAPES``)
run through the shell tool as root and as an unprivileged user — every attempt fails,
the host's canary tree and settings stay as they were, no secret reaches an output, and
the workspace does not change without a confirmation."""

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

from .sandbox_corpus import ESCAPES, run_escapes

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the sandbox needs Linux")
REPO = Path(__file__).resolve().parents[2]
NOBODY = 65534


def _check(result: dict[str, object]) -> None:
    assert result["ran"] == len(ESCAPES) >= 60
    assert result["failures"] == []


@pytest.mark.slow
def test_every_escape_fails_as_the_user_running_the_tests(tmp_path: Path) -> None:
    assert probe() is None
    _check(run_escapes(tmp_path))


def _as_nobody(base: Path) -> subprocess.CompletedProcess[str]:
    """``run_escapes(base)`` in a process of uid/gid 65534, with an interpreter that user
    may run (this one, else the system's of the same version) and this environment's
    packages; exit code 3 when that interpreter cannot run the sandbox's helper."""
    purelib = sysconfig.get_paths()["purelib"]
    code = (
        "import json, os, site, sys\n"
        f"site.addsitedir({purelib!r}); sys.path.insert(0, {str(REPO)!r})\n"
        "if not os.access(sys.executable, os.X_OK): sys.exit(3)\n"
        "from pathlib import Path\n"
        "from tests.actors.sandbox_corpus import run_escapes\n"
        f"print(json.dumps(run_escapes(Path({str(base)!r}))))\n"
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


@pytest.mark.slow
def test_every_escape_fails_as_an_unprivileged_user() -> None:
    if os.getuid() != 0:  # the tests themselves run unprivileged: the test above is it
        pytest.skip("the test process is unprivileged already (see the test above)")
    if shutil.which("setpriv") is None:
        pytest.skip("no setpriv to run the corpus as an unprivileged user")
    base = Path(tempfile.mkdtemp(prefix="artoo-nobody-"))
    try:
        os.chmod(base, 0o755)
        os.chown(base, NOBODY, NOBODY)
        result = _as_nobody(base)
        if result.returncode == 3 or "ModuleNotFoundError" in result.stderr:
            pytest.skip(
                "this environment's interpreter or packages are not readable by an "
                f"unprivileged user: {result.stderr.strip()[-200:]}"
            )
        assert result.returncode == 0, result.stderr[-2000:]
        _check(json.loads(result.stdout.strip().splitlines()[-1]))
    finally:
        shutil.rmtree(base, ignore_errors=True)
