"""A throwaway PostgreSQL server, for the tests and the benchmarks (``artoo.testing``).

It runs the distribution's server (``apt-get install postgresql``: binaries under
``/usr/lib/postgresql/*/bin``, else ``initdb`` on the PATH) — it installs on a bare Debian or
Ubuntu machine with one command, and is the server users run. ``initdb`` refuses root, so
as root the cluster belongs to the ``postgres`` user (``runuser``). The server listens on a
Unix socket in a temp directory only (no TCP port), with ``fsync=off`` and small buffers:
fast to start, not durable — for tests and benchmarks only.
"""

from __future__ import annotations

import contextlib
import getpass
import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = ["PostgresServer", "PostgresUnavailable", "postgres_server"]


class PostgresUnavailable(RuntimeError):
    """No PostgreSQL server could start here; the message says why."""


@dataclass(frozen=True)
class PostgresServer:
    """A running throwaway server: :meth:`url` names a database on it."""

    socket_dir: Path
    user: str

    def url(self, dbname: str = "postgres") -> str:
        """A libpq URL for ``dbname`` on this server."""
        return f"postgresql://{self.user}@/{dbname}?host={self.socket_dir}"

    def create_database(self) -> str:
        """A new, empty database; its URL."""
        import psycopg

        name = "t_" + uuid.uuid4().hex[:12]
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')  # a name we made: no injection
        return self.url(name)


def _bindir() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def _owner() -> str | None:
    """Who runs the server: None (this user), or as root the postgres (else nobody) user."""
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        return "nobody"
    return "postgres"


@contextlib.contextmanager
def postgres_server() -> Iterator[PostgresServer]:
    """Start a throwaway server; stop it and remove its files after.

    Raises :class:`PostgresUnavailable` (with the reason) when none can start: psycopg or
    the server binaries missing, or initdb/pg_ctl failing.
    """
    try:
        import psycopg  # noqa: F401
    except ImportError:
        raise PostgresUnavailable(
            "psycopg is not installed (pip install 'artoo[postgres]')"
        ) from None
    bindir = _bindir()
    if bindir is None:
        raise PostgresUnavailable("no PostgreSQL server binaries (apt-get install postgresql)")
    owner = _owner()

    def as_owner(*argv: str) -> list[str]:
        return ["runuser", "-u", owner, "--", *argv] if owner else list(argv)

    root = Path(tempfile.mkdtemp(prefix="artoo-pg-"))
    data, sockets = root / "data", root / "sock"
    sockets.mkdir()
    if owner:
        os.chmod(root, 0o755)
        shutil.chown(root, owner)
        shutil.chown(sockets, owner)
    user = owner or getpass.getuser()
    options = (
        f"-k {sockets} -c listen_addresses='' -c fsync=off -c synchronous_commit=off "
        "-c full_page_writes=off -c shared_buffers=16MB -c max_connections=100"
    )
    pg_ctl = str(bindir / "pg_ctl")
    try:
        subprocess.run(
            as_owner(str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", user, "-N"),
            check=True,
            capture_output=True,
            timeout=120,
        )
        subprocess.run(
            as_owner(
                pg_ctl, "-D", str(data), "-o", options, "-w", "-l", str(root / "log"), "start"
            ),
            check=True,
            capture_output=True,
            timeout=120,
        )
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as exc:
        detail = (getattr(exc, "stderr", None) or b"").decode(errors="replace").strip()
        shutil.rmtree(root, ignore_errors=True)
        raise PostgresUnavailable(
            f"a PostgreSQL server could not start: {exc} {detail[-300:]}"
        ) from None
    try:
        yield PostgresServer(sockets, user)
    finally:
        with contextlib.suppress(subprocess.SubprocessError, OSError):
            subprocess.run(
                as_owner(pg_ctl, "-D", str(data), "-m", "immediate", "-w", "stop"),
                capture_output=True,
                timeout=60,
            )
        shutil.rmtree(root, ignore_errors=True)
