"""The PostgreSQL event log passes the one contract, on a real server (tests/pgserver.py)."""

from __future__ import annotations

import multiprocessing
import threading
from pathlib import Path

import pytest

from artoo.eventstore import StoreError

from .eventlog_contract import EventLogContract, env

pytest.importorskip("psycopg")

from artoo.eventstore._postgres import (
    SCHEMA_VERSION,
    PostgresEventLog,
    connect,
    migrate,
    schema_version,
)


class TestPostgresEventLog(EventLogContract):
    @pytest.fixture(autouse=True)
    def _database(self, pg_url: str) -> None:
        self.url = pg_url

    def create_log(self, tmp_path: Path) -> PostgresEventLog:
        return PostgresEventLog.open(self.url)

    def test_a_reopened_log_continues_its_seqs_and_keeps_its_identity(self) -> None:
        with PostgresEventLog.open(self.url) as log:
            log.append([env(), env()])
            log_id = log.log_id
        with PostgresEventLog.open(self.url) as log:
            assert log.last_seq == 2 and log.append([env()]) == [3]
            assert log.log_id == log_id

    def test_a_failed_group_leaves_no_gap(self) -> None:
        with PostgresEventLog.open(self.url) as log:
            log.append([env()])
            with pytest.raises(ValueError):
                log.append([env(), env(seq=9)])
            assert log.append([env(text="after")]) == [2]
            assert [e.seq for e in log.read()] == [1, 2]


def _write(url: str, worker: int, n: int) -> None:
    with PostgresEventLog.open(url) as log:
        for j in range(n):
            log.append([env(f"w{worker}", f"{worker}.{j}"), env(f"w{worker}", f"{worker}.{j}b")])


def test_writers_in_many_processes_share_one_gapless_log(pg_url: str) -> None:
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_write, args=(pg_url, i, 40)) for i in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    with PostgresEventLog.open(pg_url) as log:
        assert log.last_seq == 320
        assert [e.seq for e in log.read()] == list(range(1, 321))
        for i in range(4):
            got = list(log.read_task(f"w{i}"))
            texts = [e.body.text for e in got]
            assert texts == [t for j in range(40) for t in (f"{i}.{j}", f"{i}.{j}b")]
            # each group's two envelopes are adjacent: one transaction, one run of seqs
            assert all(b.seq == a.seq + 1 for a, b in zip(got[::2], got[1::2], strict=True))


def test_a_v0_database_is_migrated_and_migration_is_idempotent(pg_url: str) -> None:
    with connect(pg_url) as conn:
        conn.execute("CREATE TABLE unrelated (x int)")  # a database with no artoo tables
        assert schema_version(conn) == 0
        assert migrate(conn) == SCHEMA_VERSION
        assert schema_version(conn) == SCHEMA_VERSION
        assert migrate(conn) == SCHEMA_VERSION
        count = conn.execute("SELECT count(*) FROM artoo_log").fetchone()
        assert count == (1,)


def test_a_version_1_store_is_upgraded_keeping_its_log(pg_url: str) -> None:
    with connect(pg_url) as conn:
        assert migrate(conn, target=1) == 1
    with PostgresEventLog(connect(pg_url), pg_url) as log:  # a v1 store with a log
        log.append([env(text="old")])
    with pytest.raises(StoreError, match="schema is version 1"):
        PostgresEventLog.open(pg_url, create=False)  # a reader does not migrate
    with PostgresEventLog.open(pg_url) as log:  # a writer does
        assert [e.body.text for e in log.read()] == ["old"]
    with connect(pg_url) as conn:
        assert schema_version(conn) == SCHEMA_VERSION == 5
        assert conn.execute("SELECT count(*) FROM artoo_audit").fetchone() == (0,)


def test_a_newer_schema_is_refused_in_one_line(pg_url: str) -> None:
    with connect(pg_url) as conn:
        migrate(conn)
        conn.execute("UPDATE artoo_schema SET version = %s", (SCHEMA_VERSION + 1,))
    with pytest.raises(StoreError, match="newer than this artoo"):
        PostgresEventLog.open(pg_url)


def test_an_unreachable_server_is_a_store_error() -> None:
    with pytest.raises(StoreError, match="cannot open the PostgreSQL store"):
        PostgresEventLog.open("postgresql://nobody@/nodb?host=/nonexistent-dir&connect_timeout=2")


def test_buses_in_two_processes_share_one_log_and_deliver_its_seqs(pg_url: str) -> None:
    """A shared log numbers each group: two buses (two connections, as two worker
    processes would have) append to one gapless log, and each delivers its envelopes with
    the seqs they have there — after the commit."""
    from artoo.actors.runtime.bus import Bus
    from artoo.schemas import UserRequest

    logs = [PostgresEventLog.open(pg_url, shared=True) for _ in range(2)]
    buses = [Bus(log) for log in logs]

    def publish(k: int) -> None:
        for j in range(150):
            buses[k].publish(UserRequest(text=f"{k}.{j}"), sender="host", task_id=f"w{k}")

    from artoo.testing import Recorder

    recorders = [Recorder(), Recorder()]
    for bus, recorder in zip(buses, recorders, strict=True):
        bus.subscribe(None, recorder.ref)
    threads = [threading.Thread(target=publish, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    for bus, recorder in zip(buses, recorders, strict=True):
        assert bus.flush(30) and recorder.wait_for(150, timeout=30)
        bus.close()
    with PostgresEventLog.open(pg_url) as log:
        logged = {e.seq: e.body.text for e in log.read()}
    assert sorted(logged) == list(range(1, 301))  # one gapless log
    for k, recorder in enumerate(recorders):
        got = [(e.seq, e.body.text) for e in recorder.envelopes]
        assert [text for _, text in got] == [f"{k}.{j}" for j in range(150)]
        assert all(logged[seq] == text for seq, text in got)  # delivered with its log seq
    for recorder in recorders:
        recorder.stop()
    for log in logs:
        log.close()


def test_a_following_bus_feeds_taps_and_store_kinds_every_writers_envelopes_in_order(
    pg_url: str,
) -> None:
    """With ``follow`` (a second reader of the shared log), a bus's taps and the
    ``store_kinds`` of its subscribers get every writer's envelopes, each once, in seq
    order; its subscribers get its own other kinds at commit, and a replay (``from_seq``)
    holds only its own."""
    from artoo.actors.runtime.bus import Bus
    from artoo.schemas import MegramForgotten, UserRequest
    from artoo.testing import Recorder

    logs = [PostgresEventLog.open(pg_url, shared=True) for _ in range(2)]
    reader = PostgresEventLog.open(pg_url, create=False)
    a = Bus(logs[0], follow=reader, store_kinds=[MegramForgotten])
    b = Bus(logs[1])
    tap = a.tap()
    own, replayed = Recorder(), Recorder()
    a.subscribe(None, own.ref)
    for j in range(40):
        bus, name = (a, "a") if j % 2 else (b, "b")
        bus.publish(UserRequest(text=f"{name}{j}"), sender="host", task_id=name)
        bus.publish(MegramForgotten(id=f"{name}{j}"), sender="dreamer")
        bus.flush()
    b.flush()
    assert a.flush(10) and a.caught_up(80, timeout=10)
    seen = [tap.get(timeout=5) for _ in range(80)]
    assert [e.seq for e in seen if e is not None] == list(range(1, 81))
    assert own.wait_for(60, timeout=10)  # its 20 requests and everyone's 40 forgets
    texts = [e.body.text for e in own.envelopes if isinstance(e.body, UserRequest)]
    assert texts == [f"a{j}" for j in range(1, 40, 2)]  # its own requests only
    forgotten = [e.body.id for e in own.envelopes if isinstance(e.body, MegramForgotten)]
    assert forgotten == [f"{'a' if j % 2 else 'b'}{j}" for j in range(40)]  # everyone's
    a.subscribe([UserRequest, MegramForgotten], replayed.ref, from_seq=1)
    assert a.flush(10) and replayed.wait_for(20, timeout=10)
    assert {e.body.text for e in replayed.envelopes} == {f"a{j}" for j in range(1, 40, 2)}
    for recorder in (own, replayed):
        recorder.stop()
    a.close()
    b.close()
    for log in (*logs, reader):
        log.close()
