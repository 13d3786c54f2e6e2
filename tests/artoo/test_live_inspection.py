"""Live inspection: ``artoo replay``, ``audit``, ``export`` and ``memory`` read a store that
a running System (another process) holds; a store URL artoo does not know is one line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from artoo._store import parse_store
from artoo.cli import main
from artoo.testing import write_script

from .helpers import PERCEIVE

HOLDER = """
import sys
import artoo
from artoo.schemas import Config

store, workspace, model = sys.argv[1:4]
with artoo.System.open(
    store, model=model, workspace=workspace, config=Config(durability="none")
) as system:
    print(system.run("say hello").status, flush=True)
    sys.stdin.readline()  # held until the test has read it
"""


@pytest.fixture(params=["leveldb", "postgres"])
def held_store(request: pytest.FixtureRequest, tmp_path: Path, workspace: Path) -> object:
    """A store held by a System running in another process, one task done: a LevelDB
    directory, or a PostgreSQL database."""
    model = write_script(
        tmp_path / "s.toml",
        [PERCEIVE, {"role": "executor", "content": "hello"}],
    )
    store = tmp_path / "store" if request.param == "leveldb" else request.getfixturevalue("pg_url")
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(store), str(workspace), model],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdin is not None
    try:
        assert holder.stdout.readline().strip() == "success"
        yield store
    finally:
        holder.stdin.write("\n")
        holder.stdin.close()
        assert holder.wait(60) == 0


def test_replay_audit_export_and_memory_read_a_held_store(
    held_store: Path | str, capsys: pytest.CaptureFixture[str]
) -> None:
    if isinstance(held_store, Path):
        assert (held_store / "events.sock").exists()  # the holder serves live reads
    assert main(["replay", str(held_store), "--json"]) == 0
    replayed = capsys.readouterr().out
    assert '"status": "success"' in replayed or '"status":"success"' in replayed
    assert main(["audit", str(held_store)]) == 0
    assert "say hello" in capsys.readouterr().out
    assert main(["audit", str(held_store), "--verify"]) == 0
    assert "the hash chain is intact" in capsys.readouterr().out
    assert main(["export", str(held_store)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert any('"FinalResult"' in line for line in lines)
    assert main(["memory", str(held_store)]) == 0
    assert "memory of" in capsys.readouterr().out


@pytest.mark.parametrize("store", ["foo://x/y", "mysql://db/artoo", "HTTP://example"])
def test_a_store_url_artoo_does_not_know_is_one_line_never_a_directory(
    store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import artoo

    monkeypatch.chdir(tmp_path)
    for command in (["replay", store], ["audit", store], ["export", store], ["memory", store]):
        assert main(command) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "unknown store scheme" in err
    assert main(["run", "hi", "--store", store]) == 2
    assert "unknown store scheme" in capsys.readouterr().err
    with pytest.raises(ValueError, match="unknown store scheme"):
        artoo.System.open(store, model="scripted:nothing.toml")
    assert list(tmp_path.iterdir()) == []  # nothing was made


def test_store_arguments_parse_to_a_directory_or_a_postgresql_url() -> None:
    assert parse_store("./.artoo").path == Path(".artoo")
    assert parse_store("dir:with:colons").path == Path("dir:with:colons")
    assert parse_store(Path("postgresql:")).path == Path("postgresql:")
    for url in ("postgresql://u@h/db", "postgres://h/db", "PostgreSQL://h/db"):
        spec = parse_store(url)
        assert spec.is_postgres and spec.url == url and spec.name == "db"


def test_a_system_on_a_postgresql_store_runs_reopens_and_verifies(
    pg_url: str, tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import artoo
    from artoo.schemas import Config

    model = write_script(
        tmp_path / "s.toml",
        [PERCEIVE, {"role": "executor", "times": 2, "content": "hello"}],
    )
    config = Config(durability="none")
    with artoo.System.open(pg_url, model=model, workspace=workspace, config=config) as system:
        assert system.url == pg_url
        assert system.run("say hello").status == "success"
        scratch = system.store
        first_end = system.log.last_seq
    assert not scratch.exists()  # the process's scratch went with it
    with artoo.System.open(pg_url, model=model, workspace=workspace, config=config) as system:
        assert system.log.last_seq >= first_end  # the same log, continued
        assert system.run("say hello").status == "success"
        assert system.audit_log.verify().ok
    assert main(["replay", pg_url, "--verify"]) == 0
    assert main(["audit", pg_url, "--verify"]) == 0
    assert "the hash chain is intact" in capsys.readouterr().out
    from artoo._store import read_log

    with read_log(pg_url) as log:
        seqs = [e.seq for e in log.read()]
    assert seqs == list(range(1, len(seqs) + 1))  # gapless across both Systems


def test_replay_verify_reads_a_held_store(
    held_store: Path | str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["replay", str(held_store), "--verify"]) == 0
