"""``artoo undo TASK`` / ``System.undo``: a task's applied changes undone from the
before-images its tool calls kept, newest first, all or nothing, and logged
(``WorkspaceRestored``). Whole scripted Systems, the command line, and hypothesis-made
file trees changed through the real tools and restored byte for byte."""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import artoo
from artoo._undo import UndoRefused, undo_task
from artoo.actors.law1 import Scope
from artoo.actors.tools import ImageKeeper, Sandbox, ToolRegistry, probe
from artoo.cli import main
from artoo.eventstore import FileBlobStore
from artoo.replay import rerun, verify
from artoo.schemas import (
    Config,
    ConfirmationRequest,
    Envelope,
    FinalResult,
    Target,
    ToolCallEnded,
    WorkspaceRestored,
)
from artoo.testing import write_script

from .helpers import DATA, all_events, read_with_targets, until

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the sandbox needs Linux")

CONFIG = Config(durability="none", max_parallel=1, confirmation_timeout_s=2.0).model_copy(
    update={"tools": Config().tools.model_copy(update={"sandbox": "required"})}
)
TODO = Target(path="notes/todo.txt", role="write")


def snapshot(root: Path) -> dict[str, tuple[str, int, bytes]]:
    """Every path beneath ``root``: its kind, mode and bytes (a link: its target)."""
    out: dict[str, tuple[str, int, bytes]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [*dirnames, *filenames]:
            full = Path(dirpath) / name
            st_ = os.lstat(full)
            rel = full.relative_to(root).as_posix()
            if stat.S_ISLNK(st_.st_mode):
                out[rel] = ("link", 0, os.readlink(full).encode())
            elif stat.S_ISDIR(st_.st_mode):
                out[rel] = ("dir", stat.S_IMODE(st_.st_mode), b"")
            else:
                out[rel] = ("file", stat.S_IMODE(st_.st_mode), full.read_bytes())
    return out


def _shell(command: str) -> dict[str, Any]:
    return {"name": "shell", "arguments": {"command": command}}


def _write(path: str, content: str) -> dict[str, Any]:
    return {"name": "write_file", "arguments": {"path": path, "content": content}}


def _entries(*calls: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"role": "perceiver", "content": {"intent": "the notes", "kind": "change", "criteria": []}},
        *({"role": "executor", "tool_calls": [call]} for call in calls),
        {"role": "executor", "times": 0, "content": "Done."},
    ]


def _run(
    tmp: Path, entries: list[dict[str, Any]], *, operator: Any = None, config: Config = CONFIG
) -> tuple[Path, Path, FinalResult]:
    """Run one scripted change on a copy of the demo workspace; (workspace, store, end)."""
    ws = tmp / "workspace"
    if not ws.exists():
        shutil.copytree(DATA / "workspace", ws)
    model = write_script(tmp / "s.toml", entries)
    with artoo.System.open(
        tmp / "store", model=model, workspace=ws, config=config, operator=operator
    ) as system:
        result = system.submit("change notes/todo.txt").result(30)
        system.flush(5)
    return ws, tmp / "store", result


def _undo(store: Path, ws: Path, task_id: str) -> WorkspaceRestored:
    with artoo.System.open_offline(store, workspace=ws) as system:
        return system.undo(task_id)


# --------------------------------------------------------------------------- whole Systems
def test_a_headless_change_of_a_target_is_undone_byte_exactly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    read_with_targets(monkeypatch, [TODO])
    before = snapshot(DATA / "workspace")
    entries = _entries(
        _shell("sed -i 's/train/TRAIN/' notes/todo.txt"),
        _write("notes/todo.txt", "all new\n"),
        _shell("chmod 600 notes/todo.txt"),
    )
    ws, store, result = _run(tmp_path, entries)
    assert (ws / "notes" / "todo.txt").read_text() == "all new\n"
    assert not [e for e in all_events(store) if isinstance(e.body, ConfirmationRequest)]
    restored = _undo(store, ws, result.task_id)
    assert snapshot(ws) == before
    assert restored.paths == ["notes/todo.txt"]
    ended = [e.seq for e in all_events(store) if isinstance(e.body, ToolCallEnded)]
    assert restored.seqs == sorted(ended, reverse=True)
    (logged,) = [e for e in all_events(store) if isinstance(e.body, WorkspaceRestored)]
    assert logged.task_id == result.task_id and logged.sender == "host"
    assert logged.body == restored
    report = verify(store)
    assert report.ok, [str(m) for m in report.mismatches]
    reran = rerun(store)  # the undo is the host's, after the end: not the task's to redo
    assert reran.ok, (reran.unanswered, reran.divergence)
    with pytest.raises(UndoRefused, match="undone already"):
        _undo(store, ws, result.task_id)


def test_created_paths_are_removed_and_deleted_trees_re_created(tmp_path: Path) -> None:
    before = snapshot(DATA / "workspace")
    entries = _entries(
        _shell("mkdir -p out/deep && printf 'x' > out/deep/a.txt && ln -s ../README.md out/r"),
        _shell("rm -r src archive/old.log"),
        _shell("mv data/sales.csv data/sales.old && chmod 700 data"),
    )
    ws, store, result = _run(tmp_path, entries, operator=lambda request: True)
    assert not (ws / "src").exists() and (ws / "out" / "deep" / "a.txt").exists()
    restored = _undo(store, ws, result.task_id)
    assert snapshot(ws) == before
    assert "src" in restored.paths and "out" in restored.paths


def test_a_path_changed_since_refuses_and_nothing_is_undone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    read_with_targets(monkeypatch, [TODO, Target(path="README.md", role="write")])
    entries = _entries(_write("README.md", "new readme\n"), _write("notes/todo.txt", "new\n"))
    ws, store, result = _run(tmp_path, entries)
    (ws / "notes" / "todo.txt").write_text("edited by hand\n")
    after = snapshot(ws)
    with pytest.raises(UndoRefused, match=r"'notes/todo\.txt' changed since task"):
        _undo(store, ws, result.task_id)
    assert snapshot(ws) == after  # README.md was not restored either
    assert not [e for e in all_events(store) if isinstance(e.body, WorkspaceRestored)]


def test_a_change_whose_image_was_over_the_cap_cannot_be_undone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    read_with_targets(monkeypatch, [TODO])
    tiny = CONFIG.model_copy(
        update={"tools": CONFIG.tools.model_copy(update={"undo_max_mb": 0.00001})}
    )
    ws, store, result = _run(
        tmp_path,
        _entries(_shell("echo more >> notes/todo.txt")),
        operator=lambda r: True,
        config=tiny,
    )
    (request,) = [e.body for e in all_events(store) if isinstance(e.body, ConfirmationRequest)]
    assert request.effects[0].before == ""  # not kept: not reversible, so it asked
    with pytest.raises(UndoRefused, match=r"no before-image of 'notes/todo\.txt'"):
        _undo(store, ws, result.task_id)


def test_a_store_that_lost_its_blobs_cannot_undo(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    read_with_targets(monkeypatch, [TODO])
    ws, store, result = _run(tmp_path, _entries(_write("notes/todo.txt", "new\n")))
    shutil.rmtree(store / "blobs")
    with pytest.raises(UndoRefused, match="missing from the store's blobs"):
        _undo(store, ws, result.task_id)
    assert (ws / "notes" / "todo.txt").read_text() == "new\n"


def test_a_running_task_is_refused(tmp_path: Path) -> None:
    ws = tmp_path / "workspace"
    shutil.copytree(DATA / "workspace", ws)
    model = write_script(tmp_path / "s.toml", _entries(_shell("rm archive/old.log")))
    cfg = CONFIG.model_copy(update={"confirmation_timeout_s": 30.0})
    with artoo.System.open(
        tmp_path / "store", model=model, workspace=ws, config=cfg, inbox=True
    ) as system:
        handle = system.submit("remove archive/old.log")
        until(system.inbox)  # waiting for the operator
        with pytest.raises(UndoRefused, match="still running"):
            system.undo(handle.task_id)
        handle.cancel()
        handle.result(10)


def test_a_postgresql_store_keeps_its_images_in_the_database(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    pytest.importorskip("psycopg")
    read_with_targets(monkeypatch, [TODO])
    ws = tmp_path / "workspace"
    shutil.copytree(DATA / "workspace", ws)
    before = snapshot(ws)
    model = write_script(tmp_path / "s.toml", _entries(_write("notes/todo.txt", "new\n")))
    with artoo.System.open(pg_url, model=model, workspace=ws, config=CONFIG) as system:
        result = system.submit("change notes/todo.txt").result(30)
        system.flush(5)
    assert not (tmp_path / "store").exists()
    assert main(["undo", result.task_id, "--store", pg_url, "--workspace", str(ws)]) == 0
    assert "1 path(s) restored" in capsys.readouterr().out
    assert snapshot(ws) == before
    assert main(["replay", pg_url, "--verify"]) == 0


def test_a_task_that_changed_nothing_is_refused(tmp_path: Path) -> None:
    ws, store, result = _run(tmp_path, _entries(_shell("cat notes/todo.txt")))
    with pytest.raises(UndoRefused, match="changed nothing"):
        _undo(store, ws, result.task_id)


def test_the_command_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    read_with_targets(monkeypatch, [TODO])
    before = snapshot(DATA / "workspace")
    ws, store, result = _run(tmp_path, _entries(_write("notes/todo.txt", "new\n")))
    prefix = result.task_id[:10]
    code = main(["undo", prefix, "--store", str(store), "--workspace", str(ws)])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert f"undone task {result.task_id}" in out.out and "notes/todo.txt" in out.out
    assert snapshot(ws) == before
    code = main(["undo", prefix, "--store", str(store), "--workspace", str(ws)])
    out = capsys.readouterr()
    assert code == 1 and out.err.startswith("artoo undo: task ")
    assert "undone already" in out.err and out.err.count("\n") == 1
    assert main(["undo", "NOPE", "--store", str(store)]) == 2
    assert "no task 'NOPE'" in capsys.readouterr().err


def test_the_help_says_what_undo_does() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "artoo", "undo", "--help"], capture_output=True, text=True
    )
    assert done.returncode == 0
    assert "All or nothing" in done.stdout and "--workspace" in done.stdout


# --------------------------------------------------------------------------- generated trees
@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    why = probe()
    assert why is None, f"no sandbox on this machine: {why}"
    return Sandbox()


_NAMES = ["a", "b", "c.txt", "d/e", "d/f.txt", "g/h/i"]
_CONTENT = st.binary(max_size=64).filter(lambda b: b"\r" not in b)
_MODES = st.sampled_from([0o600, 0o640, 0o644, 0o444])

trees = st.dictionaries(st.sampled_from(_NAMES), st.tuples(_CONTENT, _MODES), max_size=5)
"""A workspace: files (with their bytes and modes) at some of the names."""

ops = st.lists(
    st.one_of(
        st.tuples(st.just("write"), st.sampled_from([*_NAMES, "new.txt", "n/m.txt"]), _CONTENT),
        st.tuples(st.just("rm"), st.sampled_from([*_NAMES, "d", "g", "g/h"]), st.just(b"")),
        st.tuples(
            st.just("chmod"), st.sampled_from([*_NAMES, "d"]), st.sampled_from([b"600", b"755"])
        ),
        st.tuples(
            st.just("link"), st.sampled_from(["l1", "d/l2"]), st.sampled_from([b"a", b"../x"])
        ),
        st.tuples(st.just("mv"), st.sampled_from(_NAMES), st.sampled_from([b"moved", b"d/moved"])),
        st.tuples(st.just("mkdir"), st.sampled_from(["k", "k/j", "d/k"]), st.just(b"")),
        st.tuples(st.just("todir"), st.sampled_from([*_NAMES, "d"]), st.just(b"")),
        st.tuples(st.just("tofile"), st.sampled_from([*_NAMES, "d", "g"]), _CONTENT),
    ),
    min_size=1,
    max_size=5,
)
"""Changes, each one tool call: write_file, or a shell command in the sandbox (a path
replaced by a directory, or by a file, in one command too)."""


def _call(op: tuple[str, str, bytes]) -> tuple[str, dict[str, Any]]:
    kind, path, arg = op
    if kind == "write":
        return "write_file", {"path": path, "content": arg.decode("latin-1")}
    commands = {
        "rm": lambda: f"rm -rf {path}",
        "chmod": lambda: f"chmod {arg.decode()} {path}",
        "link": lambda: f"ln -s {arg.decode()} {path}",
        "mv": lambda: f"mv {path} {arg.decode()}",
        "mkdir": lambda: f"mkdir -p {path}",
        "todir": lambda: f"rm -rf {path} && mkdir -p {path}/z && echo x > {path}/z/y",
        "tofile": lambda: f"rm -rf {path} && printf '%s' {arg.hex() or 'e'} > {path}",
    }
    command = commands[kind]()
    return "shell", {"command": command}


@settings(
    max_examples=20,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(tree=trees, changes=ops)
def test_any_changes_through_the_real_tools_are_undone_byte_exactly(
    tmp_path_factory: pytest.TempPathFactory,
    sandbox: Sandbox,
    tree: dict[str, tuple[bytes, int]],
    changes: list[tuple[str, str, bytes]],
) -> None:
    tmp = tmp_path_factory.mktemp("undo")
    ws = tmp / "ws"
    ws.mkdir()
    for name, (data, mode) in tree.items():
        if any(other.startswith(name + "/") for other in tree):
            continue  # a name that is a directory of another
        (ws / name).parent.mkdir(parents=True, exist_ok=True)
        (ws / name).write_bytes(data)
        os.chmod(ws / name, mode)
    before = snapshot(ws)
    keeper = ImageKeeper(FileBlobStore(tmp / "blobs", durability="none"), 1 << 20)
    reg = ToolRegistry(
        ws,
        tmp / "spill",
        confirm=lambda request: True,
        sandbox=sandbox,
        images=keeper,
        scope=Scope(),
        shell_timeout_s=20,
    )
    envelopes: list[Envelope] = []
    for i, op in enumerate(changes, start=1):
        name, args = _call(op)
        outcome = reg.call(name, args)
        envelopes.append(
            Envelope(i, 0.0, "t", "executor", None, None, ToolCallEnded(call=outcome.call))
        )
    envelopes.append(
        Envelope(
            len(changes) + 1,
            0.0,
            "t",
            "ggs",
            None,
            None,
            FinalResult(task_id="t", status="success"),
        )
    )
    try:
        undo_task("t", envelopes, ws, keeper)
    except UndoRefused as exc:
        assert "changed nothing" in str(exc), exc
    assert snapshot(ws) == before


def test_a_file_read_back_hashes_as_its_after(tmp_path: Path) -> None:
    """``FileEffect.after`` is the sha256 of the bytes applied."""
    (tmp_path / "ws").mkdir()
    keeper = ImageKeeper(FileBlobStore(tmp_path / "blobs", durability="none"), 1 << 20)
    reg = ToolRegistry(tmp_path / "ws", tmp_path / "spill", images=keeper, scope=Scope())
    call = reg.call("write_file", {"path": "n.txt", "content": "héllo"}).call
    assert call.effects[0].after == hashlib.sha256("héllo".encode()).hexdigest()
    assert call.effects[0].before == ""  # a creation keeps no image
