"""The session's PostgreSQL server (``artoo.testing.postgres_server``: the distribution's
``postgresql`` package, which ``.ci/run`` installs): started once, skipped with the reason
only where none can start. ``pg_url`` gives each test a fresh, empty database."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from artoo.testing import PostgresServer, PostgresUnavailable, postgres_server


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PostgresServer]:
    """The session's PostgreSQL server (skips, saying why, when none can start)."""
    try:
        with postgres_server() as server:
            yield server
    except PostgresUnavailable as exc:
        pytest.skip(str(exc))


@pytest.fixture
def pg_url(pg_server: PostgresServer) -> str:
    """A fresh, empty database on the session's server."""
    return pg_server.create_database()
