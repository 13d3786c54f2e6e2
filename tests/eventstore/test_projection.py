"""Memory as a projection of the log: rebuilding it is all-or-nothing and respects the lock."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

import artoo
from artoo.eventstore import MegramStore, StoreLocked, rebuild_memory
from artoo.eventstore import _projection as projection

GOLDEN = Path(__file__).parent.parent / "data" / "golden_demo_0_1"


def _tree(memory: Path) -> tuple[int, list[bytes]]:
    """What memory holds: its watermark and every megram, encoded."""
    with MegramStore.open(memory) as megrams:
        return megrams.applied_seq, sorted(msgspec.msgpack.encode(m) for m in megrams.megrams())


@pytest.fixture
def store(tmp_path: Path) -> Path:
    import shutil

    shutil.copytree(GOLDEN, tmp_path / "store")
    with artoo.System.open_offline(tmp_path / "store"):
        pass  # builds memory/ from the log
    return tmp_path / "store"


def test_a_rebuild_equals_the_projection_it_replaces(store: Path) -> None:
    with artoo.System.open_offline(store) as system:
        before = sorted(m.id for m in system.megrams.megrams())
    assert rebuild_memory(store) > 0
    with artoo.System.open_offline(store) as system:
        assert sorted(m.id for m in system.megrams.megrams()) == before
    assert not (store / "memory.rebuild").exists() and not (store / "memory.old").exists()


def test_a_rebuild_of_a_held_store_changes_nothing(store: Path) -> None:
    before = _tree(store / "memory")
    assert before[1]
    with artoo.System.open_offline(store), pytest.raises(StoreLocked):
        rebuild_memory(store)
    assert _tree(store / "memory") == before
    assert not (store / "memory.rebuild").exists()


def test_a_rebuild_that_fails_midway_leaves_the_old_memory(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = _tree(store / "memory")

    def broken(log: object, megrams: object) -> int:
        raise OSError("the log could not be read")

    monkeypatch.setattr(projection, "catch_up_memory", broken)
    with pytest.raises(OSError, match="could not be read"):
        rebuild_memory(store)
    assert _tree(store / "memory") == before
    assert not (store / "memory.rebuild").exists()
