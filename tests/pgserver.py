"""A real PostgreSQL server for the tests: started once per session, skipped with a reason
only where none can start.

It is the distribution's ``postgresql`` package (``/usr/lib/postgresql/*/bin``; ``.ci/run``
installs it): ``initdb`` refuses to run as root, so as root the cluster belongs to the
``postgres`` user (``runuser``). The server listens on a Unix socket in a temp directory
only (no TCP port), with ``fsync=off`` and small buffers: the tests measure behaviour, not
durability. ``pg_url`` is a fixture giving each test a fresh database.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest


def _bindir() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def _as_owner(owner: str | None, argv: list[str]) -> list[str]:
    return ["runuser", "-u", owner, "--", *argv] if owner else argv


class PgServer:
    """A running server: ``url(db)`` is a libpq URL for a database on it."""

    def __init__(self, socket_dir: Path, user: str) -> None:
        self.socket_dir = socket_dir
        self.user = user

    def url(self, dbname: str = "postgres") -> str:
        return f"postgresql://{self.user}@/{dbname}?host={self.socket_dir}"

    def create_database(self) -> str:
        """A new empty database; its URL."""
        import psycopg

        name = "t_" + uuid.uuid4().hex[:12]
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    """The session's PostgreSQL server (skips when none can start)."""
    pytest.importorskip("psycopg", reason="psycopg is not installed (the postgres extra)")
    bindir = _bindir()
    if bindir is None:
        pytest.skip("no PostgreSQL server binaries (apt-get install postgresql)")
    owner: str | None = None
    if os.geteuid() == 0:  # initdb refuses root: the cluster belongs to the postgres user
        owner = "postgres" if _user_exists("postgres") else "nobody"
    root = Path(tempfile.mkdtemp(prefix="artoo-pg-"))
    data, sockets = root / "data", root / "sock"
    sockets.mkdir()
    if owner:
        os.chmod(root, 0o755)
        shutil.chown(root, owner)
        shutil.chown(sockets, owner)
    user = owner or _current_user()
    try:
        subprocess.run(
            _as_owner(
                owner,
                [
                    str(bindir / "initdb"),
                    "-D",
                    str(data),
                    "-A",
                    "trust",
                    "-U",
                    user,
                    "--no-sync",
                    "-E",
                    "UTF8",
                ],
            ),
            check=True,
            capture_output=True,
            timeout=120,
        )
        options = (
            f"-k {sockets} -c listen_addresses='' -c fsync=off -c synchronous_commit=off "
            "-c full_page_writes=off -c shared_buffers=16MB -c max_connections=100"
        )
        subprocess.run(
            _as_owner(
                owner,
                [
                    str(bindir / "pg_ctl"),
                    "-D",
                    str(data),
                    "-o",
                    options,
                    "-w",
                    "-l",
                    str(root / "log"),
                    "start",
                ],
            ),
            check=True,
            capture_output=True,
            timeout=120,
        )
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as exc:
        detail = getattr(exc, "stderr", b"") or b""
        shutil.rmtree(root, ignore_errors=True)
        pytest.skip(f"a PostgreSQL server could not start: {exc} {detail.decode()[-300:]}")
    try:
        yield PgServer(sockets, user)
    finally:
        with contextlib.suppress(Exception):
            subprocess.run(
                _as_owner(
                    owner,
                    [str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"],
                ),
                capture_output=True,
                timeout=60,
            )
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def pg_url(pg_server: PgServer) -> str:
    """A fresh, empty database on the session's server."""
    return pg_server.create_database()


def _user_exists(name: str) -> bool:
    import pwd

    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


def _current_user() -> str:
    import getpass

    return getpass.getuser()
