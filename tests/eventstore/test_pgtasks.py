"""The PostgreSQL task queue: leases with SKIP LOCKED, heartbeats, expiry claimed once."""

from __future__ import annotations

import threading

import pytest

pytest.importorskip("psycopg")

from artoo.eventstore._pgtasks import TaskQueue


@pytest.fixture
def queue(pg_url: str) -> TaskQueue:
    q = TaskQueue(pg_url)
    yield q
    q.close()


def test_each_task_is_leased_to_exactly_one_of_many_workers(pg_url: str, queue: TaskQueue) -> None:
    for i in range(60):
        queue.enqueue(f"T{i:03d}", f"task {i}", now=float(i))
    got: dict[str, list[str]] = {}

    def worker(name: str) -> None:
        q = TaskQueue(pg_url)
        mine = got.setdefault(name, [])
        while (leased := q.lease(name, now=100.0, lease_s=30.0)) is not None:
            mine.append(leased[0])
        q.close()

    threads = [threading.Thread(target=worker, args=(f"w{k}",)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    leased = sorted(t for ids in got.values() for t in ids)
    assert leased == [f"T{i:03d}" for i in range(60)]  # all, none twice
    assert queue.counts() == {"leased": 60}


def test_a_queued_task_id_is_refused_twice(queue: TaskQueue) -> None:
    queue.enqueue("T1", "x", now=0.0)
    with pytest.raises(ValueError, match="already queued"):
        queue.enqueue("T1", "x", now=1.0)


def test_leases_go_oldest_first_and_heartbeats_keep_them(queue: TaskQueue) -> None:
    queue.enqueue("B", "second", now=2.0)
    queue.enqueue("A", "first", now=1.0)
    assert queue.lease("w1", now=10.0, lease_s=5.0)[:2] == ("A", "first")
    assert queue.heartbeat("w1", now=14.0, lease_s=5.0) == 1  # now until 19
    assert queue.claim_expired("w2", now=18.0) == []
    assert queue.finish("A", "w1") is True
    assert queue.counts() == {"done": 1, "queued": 1}


def test_an_expired_lease_is_claimed_once_and_its_worker_cannot_finish(
    pg_url: str, queue: TaskQueue
) -> None:
    queue.enqueue("A", "first", now=0.0)
    assert queue.lease("dead", now=1.0, lease_s=5.0)[:2] == ("A", "first")
    assert queue.heartbeat("dead", now=7.0, lease_s=5.0) == 0  # too late: it expired at 6
    other = TaskQueue(pg_url)
    claims = [queue.claim_expired("w2", now=7.0), other.claim_expired("w3", now=7.0)]
    other.close()
    lost = [c for claim in claims for c in claim]
    assert [(c.task_id, c.worker) for c in lost] == [("A", "dead")]  # exactly one claimer
    assert queue.finish("A", "dead") is False  # the dead worker's lease is gone


def test_a_stalled_writer_keeps_its_tasks_and_a_gone_one_loses_them_once(
    pg_url: str, queue: TaskQueue
) -> None:
    from artoo.eventstore._postgres import PostgresEventLog

    log = PostgresEventLog.open(pg_url, shared=True)
    log.join("w1")  # the writer's session lock, on the connection it appends with
    queue.enqueue("A", "x", now=0.0, worker="w1", lease_s=1.0)
    assert queue.claim_expired("w2", now=100.0) == []  # lease out, but w1 can still append
    log.close()  # its session is gone (as when its process is killed)
    other = TaskQueue(pg_url)
    claims = [queue.claim_expired("w2", now=100.0), other.claim_expired("w3", now=100.0)]
    other.close()
    lost = [c for claim in claims for c in claim]
    assert [(c.task_id, c.worker) for c in lost] == [("A", "w1")]  # exactly one claimer
    claimer = "w2" if claims[0] else "w3"
    assert queue.finish("A", "w1") is False
    assert queue.finish("A", claimer) is True
    assert queue.counts() == {"done": 1}
