"""The one contract every blob store passes (eventsourcing's recorder style): a backend's
class subclasses :class:`BlobStoreContract` and writes ``create_store``."""

from __future__ import annotations

import multiprocessing
import os
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from artoo.eventstore import (
    BlobCorrupt,
    BlobMissing,
    BlobStore,
    FileBlobStore,
    InMemoryBlobStore,
    sha256_hex,
)

ABSENT = "0" * 64


class BlobStoreContract:
    """What undo relies on: content addressing, idempotence, exact bytes, threads."""

    def create_store(self, tmp_path: Path) -> Any:
        raise NotImplementedError

    def reopen(self, tmp_path: Path) -> Any:
        """The same store opened again (a new process would see this)."""
        return self.create_store(tmp_path)

    @pytest.fixture
    def store(self, tmp_path: Path) -> Any:
        store = self.create_store(tmp_path)
        yield store
        store.close()

    def test_it_is_a_blob_store(self, store: Any) -> None:
        assert isinstance(store, BlobStore)

    def test_a_blob_is_addressed_by_its_sha256(self, store: Any) -> None:
        assert store.put(b"hello") == sha256_hex(b"hello")
        assert sha256_hex(b"hello") == (
            "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
        )
        assert store.get(sha256_hex(b"hello")) == b"hello"

    def test_the_empty_blob_and_binary_bytes_read_back_exactly(self, store: Any) -> None:
        for data in (b"", bytes(range(256)) * 3, b"\x00\r\n\xff"):
            assert store.get(store.put(data)) == data

    def test_putting_the_same_bytes_twice_keeps_one_blob(self, store: Any) -> None:
        first = store.put(b"same")
        assert store.put(b"same") == first and store.get(first) == b"same"

    def test_a_missing_blob_is_blob_missing(self, store: Any) -> None:
        assert not store.has(ABSENT)
        with pytest.raises(BlobMissing):
            store.get(ABSENT)
        with pytest.raises(KeyError):  # BlobMissing is a KeyError
            store.get(ABSENT)

    def test_has_says_whether_a_blob_is_kept(self, store: Any) -> None:
        sha = store.put(b"kept")
        assert store.has(sha) and not store.has(sha256_hex(b"not kept"))

    def test_an_address_that_is_no_sha256_is_a_value_error(self, store: Any) -> None:
        for bad in ("", "abc", "../../etc/passwd", "G" * 64, "A" * 64):
            with pytest.raises(ValueError):
                store.get(bad)

    def test_a_blob_outlives_a_reopen(self, tmp_path: Path) -> None:
        store = self.create_store(tmp_path)
        sha = store.put(b"durable")
        store.close()
        again = self.reopen(tmp_path)
        try:
            assert again.get(sha) == b"durable"
        finally:
            again.close()

    def test_a_closed_store_refuses_calls(self, tmp_path: Path) -> None:
        store = self.create_store(tmp_path)
        store.close()
        store.close()  # idempotent
        with pytest.raises(ValueError):
            store.put(b"late")

    def test_threads_putting_at_once_all_read_back(self, store: Any) -> None:
        blobs = [os.urandom(1000) + bytes([i]) for i in range(40)]
        errors: list[BaseException] = []

        def work(chunk: list[bytes]) -> None:
            try:
                for data in chunk:
                    assert store.get(store.put(data)) == data
                    store.put(data)  # again, racing the others
            except BaseException as exc:  # pragma: no cover - reported below
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(blobs[i::4] * 2,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors
        assert all(store.get(sha256_hex(d)) == d for d in blobs)

    @settings(
        max_examples=25,
        suppress_health_check=[
            HealthCheck.function_scoped_fixture,
            HealthCheck.differing_executors,
        ],
    )
    @given(data=st.binary(max_size=4096))
    def test_any_bytes_read_back_exactly(self, store: Any, data: bytes) -> None:
        assert store.get(store.put(data)) == data


class TestInMemoryBlobStore(BlobStoreContract):
    def create_store(self, tmp_path: Path) -> InMemoryBlobStore:
        if not hasattr(self, "_kept"):
            self._kept: dict[Path, InMemoryBlobStore] = {}
        store = InMemoryBlobStore()
        self._kept[tmp_path] = store
        return store

    def reopen(self, tmp_path: Path) -> InMemoryBlobStore:
        """Memory holds nothing past its object: the reopen is the same blobs."""
        again = InMemoryBlobStore()
        again._blobs = self._kept[tmp_path]._blobs
        return again


class TestFileBlobStore(BlobStoreContract):
    def create_store(self, tmp_path: Path) -> FileBlobStore:
        return FileBlobStore(tmp_path / "blobs", durability="batch")

    def test_the_layout_is_two_hex_digits_then_the_rest(self, tmp_path: Path) -> None:
        store = FileBlobStore(tmp_path / "blobs", durability="none")
        sha = store.put(b"laid out")
        assert (tmp_path / "blobs" / sha[:2] / sha[2:]).read_bytes() == b"laid out"
        assert not [p for p in (tmp_path / "blobs").rglob("*.tmp")]  # no temporary left

    def test_a_damaged_blob_is_blob_corrupt(self, tmp_path: Path) -> None:
        store = FileBlobStore(tmp_path / "blobs", durability="none")
        sha = store.put(b"original")
        (tmp_path / "blobs" / sha[:2] / sha[2:]).write_bytes(b"tampered")
        with pytest.raises(BlobCorrupt, match="damaged"):
            store.get(sha)

    def test_an_unknown_durability_is_refused(self, tmp_path: Path) -> None:
        with pytest.raises(ValueError, match="durability"):
            FileBlobStore(tmp_path / "blobs", durability="sometimes")  # type: ignore[arg-type]

    def test_processes_putting_at_once_share_one_store(self, tmp_path: Path) -> None:
        ctx = multiprocessing.get_context("spawn")
        procs = [ctx.Process(target=_put_many, args=(tmp_path / "blobs", i)) for i in range(3)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(60)
            assert p.exitcode == 0
        store = FileBlobStore(tmp_path / "blobs", durability="none")
        for i in range(3):
            for j in range(20):
                data = f"{j}".encode() * 50  # the same bytes from every process
                assert store.get(sha256_hex(data)) == data
            assert store.get(sha256_hex(f"own {i}".encode())) == f"own {i}".encode()


def _put_many(directory: Path, worker: int) -> None:
    store = FileBlobStore(directory, durability="batch")
    for j in range(20):
        store.put(f"{j}".encode() * 50)
    store.put(f"own {worker}".encode())


class TestPostgresBlobStore(BlobStoreContract):
    @pytest.fixture(autouse=True)
    def _database(self, pg_url: str) -> None:
        pytest.importorskip("psycopg")
        self.url = pg_url

    def create_store(self, tmp_path: Path) -> Any:
        from artoo.eventstore import PostgresBlobStore

        return PostgresBlobStore(self.url)

    def test_a_damaged_blob_is_blob_corrupt(self, tmp_path: Path) -> None:
        from artoo.eventstore._postgres import connect

        store = self.create_store(tmp_path)
        try:
            sha = store.put(b"original")
            with connect(self.url) as conn:
                conn.execute("UPDATE artoo_blobs SET data = %s WHERE sha = %s", (b"x", sha))
            with pytest.raises(BlobCorrupt):
                store.get(sha)
        finally:
            store.close()
