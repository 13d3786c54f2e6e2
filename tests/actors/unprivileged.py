"""Running a test scenario as an unprivileged user: ``as_nobody("module:function", base)``
runs ``tests.actors.module.function(base)`` in a process of uid/gid 65534 and returns what
it printed as JSON — the corpus and lifecycle scenarios are run so as root and not."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
NOBODY = 65534


def _run(call: str, base: Path) -> subprocess.CompletedProcess[str]:
    """``call(base)`` in a process of uid/gid 65534, with an interpreter that user may
    run (this one, else the system's of the same version) and this environment's
    packages; exit code 3 when that interpreter cannot run."""
    module, function = call.split(":")
    purelib = sysconfig.get_paths()["purelib"]
    code = (
        "import json, os, site, sys\n"
        f"site.addsitedir({purelib!r}); sys.path.insert(0, {str(REPO)!r})\n"
        "if not os.access(sys.executable, os.X_OK): sys.exit(3)\n"
        "from pathlib import Path\n"
        f"from tests.actors.{module} import {function}\n"
        f"print(json.dumps({function}(Path({str(base)!r}))))\n"
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
            timeout=900,
        )
        if result.returncode not in (3, 126, 127) and "Permission denied" not in result.stderr:
            break  # this interpreter ran the scenario (or failed at it: reported below)
    return result


@contextmanager
def nobody_base() -> Iterator[Path]:
    """An empty directory owned by uid 65534 (removed afterwards)."""
    base = Path(tempfile.mkdtemp(prefix="artoo-nobody-"))
    try:
        os.chmod(base, 0o755)
        os.chown(base, NOBODY, NOBODY)
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


def as_nobody(call: str) -> object:
    """What ``call`` ("module:function" of tests.actors, taking a base directory) returned
    when run as uid 65534; skips the test where that cannot be done here."""
    if os.getuid() != 0:
        pytest.skip("the test process is unprivileged already (the test as this user is it)")
    if shutil.which("setpriv") is None:
        pytest.skip("no setpriv to run as an unprivileged user")
    with nobody_base() as base:
        result = _run(call, base)
    if result.returncode == 3 or "ModuleNotFoundError" in result.stderr:
        pytest.skip(
            "this environment's interpreter or packages are not readable by an "
            f"unprivileged user: {result.stderr.strip()[-200:]}"
        )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])
