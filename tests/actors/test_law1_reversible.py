"""Law 1, reversible by construction (``artoo.actors.law1.decide_by_effect``): an
in-workspace modification of a target of the subtask's reading whose before-image is kept
goes ahead with no operator; deletions the reading does not name, planted code, changes
whose image was not kept still ask — decided by the pure function, by the real tools
(``write_file`` and a sandboxed ``shell``, images in a real blob store), and by whole
scripted Systems whose logs ``replay --verify`` recomputes."""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from artoo.actors.law1 import Scope, decide_by_effect, decide_effects, reversible
from artoo.actors.tools import ConfirmationNeeded, ImageKeeper, Sandbox, ToolRegistry, probe
from artoo.eventstore import FileBlobStore
from artoo.replay import rerun, verify
from artoo.schemas import (
    Config,
    ConfirmationDecision,
    ConfirmationRequest,
    FileEffect,
    SubTask,
    Target,
    ToolCall,
    ToolCallEnded,
)
from tests.artoo.helpers import all_events, read_with_targets, rewrite_event, run_verified

SHA = "c" * 64
TODO = Target(path="notes/todo.txt", role="write")
CHANGE = Scope("change", (TODO,))


def _modified(path: str = "notes/todo.txt", before: str = SHA, **kw: Any) -> FileEffect:
    return FileEffect(path=path, change="modified", before=before, after="d" * 64, **kw)


# --------------------------------------------------------------------------- the rule
def test_a_kept_modification_of_a_write_target_goes_ahead_unasked() -> None:
    check = decide_by_effect([_modified()], CHANGE)
    assert (check.basis, check.ask, check.reason, check.target) == ("reversible", False, "", None)


def test_no_kept_image_asks_as_before() -> None:
    check = decide_by_effect([_modified(before="")], CHANGE)
    assert check.basis == "effects" and check.ask and check.target == "notes/todo.txt"


def test_deletions_hazards_links_and_kind_changes_still_ask() -> None:
    asks = [
        FileEffect(path="notes/todo.txt", change="deleted", before=SHA),
        _modified(hazard="executable"),
        FileEffect(path="notes/todo.txt", change="replaced", before=SHA),
        FileEffect(path="notes/todo.txt", change="modified", kind="symlink", before=SHA),
    ]
    for effect in asks:
        scope = Scope("change", (TODO, Target(path="notes/todo.txt", role="delete")))
        check = decide_by_effect([effect], scope)
        assert check.basis == "effects" and check.ask, effect


def test_a_mode_change_is_reversible_but_gaining_execute_is_planted_code() -> None:
    meta = FileEffect(path="notes/todo.txt", change="metadata", before=SHA, summary="mode")
    assert decide_by_effect([meta], CHANGE).basis == "reversible"
    planted = msgspec.structs.replace(meta, hazard="executable")
    assert decide_by_effect([planted], CHANGE).ask


def test_a_file_under_a_create_directory_counts_as_created() -> None:
    scope = Scope("creation", (Target(path="out/", role="create"),))
    assert decide_by_effect([_modified("out/names.txt")], scope).basis == "reversible"
    scope = Scope("creation", (Target(path="out/names.txt", role="create"),))
    assert decide_by_effect([_modified("out/names.txt")], scope).basis == "reversible"


def test_with_a_deletion_only_the_deletion_is_asked_about() -> None:
    scope = Scope("change", (TODO, Target(path="old.log", role="delete")))
    gone = FileEffect(path="old.log", change="deleted", size_before=3, before=SHA)
    check = decide_by_effect([_modified(), gone], scope)
    assert check.ask and check.target == "old.log"
    assert check.reason == "would delete old.log (3 bytes)"  # the reversible one not asked


_effects = st.lists(
    st.builds(
        FileEffect,
        path=st.sampled_from(["a.txt", "notes/todo.txt", "d", "d/x"]),
        change=st.sampled_from(["created", "deleted", "modified", "replaced", "metadata"]),
        kind=st.sampled_from(["file", "dir", "symlink"]),
        hazard=st.one_of(st.none(), st.just("executable")),
        before=st.sampled_from(["", SHA]),
    ),
    max_size=6,
)


@given(_effects, st.sampled_from(["", "question", "change", "creation"]))
def test_a_reading_with_no_targets_decides_exactly_as_before(
    effects: list[FileEffect], kind: str
) -> None:
    assert decide_by_effect(effects, Scope(kind, ())) == decide_effects(effects)
    assert decide_by_effect(effects, None) == decide_effects(effects)


@given(_effects)
def test_reversible_never_lets_more_through_than_the_targets(effects: list[FileEffect]) -> None:
    check = decide_by_effect(effects, CHANGE)
    if check.basis == "reversible":
        harmful = [e for e in effects if e.irreversible]
        assert harmful and all(reversible(e, CHANGE) for e in harmful)
        assert all(e.path == "notes/todo.txt" and e.before for e in harmful)


# --------------------------------------------------------------------------- the tools
class _Operator:
    def __init__(self, answer: bool) -> None:
        self.answer = answer
        self.asked: list[ConfirmationNeeded] = []

    def __call__(self, request: ConfirmationNeeded) -> bool:
        self.asked.append(request)
        return self.answer


def _registry(
    tmp: Path,
    scope: Scope,
    operator: _Operator,
    *,
    cap: int = 1 << 20,
    sandbox: Sandbox | None = None,
) -> tuple[ToolRegistry, ImageKeeper]:
    keeper = ImageKeeper(FileBlobStore(tmp / "blobs", durability="none"), cap)
    reg = ToolRegistry(
        tmp / "ws", tmp / "spill", confirm=operator, images=keeper, scope=scope, sandbox=sandbox
    )
    return reg, keeper


def _workspace(tmp: Path) -> Path:
    ws = tmp / "ws"
    (ws / "notes").mkdir(parents=True)
    (ws / "notes" / "todo.txt").write_bytes(b"one\ntwo\n")
    os.chmod(ws / "notes" / "todo.txt", 0o640)
    return ws


def test_write_file_keeps_the_before_image_and_goes_ahead(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    operator = _Operator(False)
    reg, keeper = _registry(tmp_path, CHANGE, operator)
    outcome = reg.call("write_file", {"path": "notes/todo.txt", "content": "one\nTWO\n"})
    assert outcome.call.ok and not operator.asked
    assert (ws / "notes" / "todo.txt").read_bytes() == b"one\nTWO\n"
    (effect,) = outcome.call.effects
    assert effect.after == hashlib.sha256(b"one\nTWO\n").hexdigest()
    (entry,) = keeper.image(effect.before).entries
    assert (entry.kind, entry.mode) == ("file", 0o640)
    assert keeper.blobs.get(entry.blob) == b"one\ntwo\n"
    assert [c.basis for c in outcome.call.law1] == ["reversible"]


def test_a_file_over_the_cap_keeps_no_image_and_asks(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    operator = _Operator(False)
    reg, _ = _registry(tmp_path, CHANGE, operator, cap=4)
    outcome = reg.call("write_file", {"path": "notes/todo.txt", "content": "x\n"})
    assert outcome.call.refusal == "law1_denied" and len(operator.asked) == 1
    assert outcome.call.effects[0].before == ""
    assert (ws / "notes" / "todo.txt").read_bytes() == b"one\ntwo\n"


def test_without_a_blob_store_nothing_is_reversible(tmp_path: Path) -> None:
    _workspace(tmp_path)
    operator = _Operator(False)
    reg = ToolRegistry(tmp_path / "ws", tmp_path / "spill", confirm=operator, scope=CHANGE)
    outcome = reg.call("write_file", {"path": "notes/todo.txt", "content": "x\n"})
    assert outcome.call.refusal == "law1_denied" and len(operator.asked) == 1


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    if sys.platform != "linux":
        pytest.skip("the sandbox needs Linux")
    why = probe()
    assert why is None, f"no sandbox on this machine: {why}"
    return Sandbox()


def test_a_sandboxed_edit_of_a_target_goes_ahead_and_a_stranger_deletion_asks(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    ws = _workspace(tmp_path)
    (ws / "keep.txt").write_text("keep\n")
    operator = _Operator(False)
    scope = Scope("change", (TODO, Target(path="keep.txt", role="write")))
    reg, keeper = _registry(tmp_path, scope, operator, sandbox=sandbox)
    outcome = reg.call("shell", {"command": "sed -i 's/two/2/' notes/todo.txt"})
    assert outcome.call.ok and not operator.asked
    assert (ws / "notes" / "todo.txt").read_bytes() == b"one\n2\n"
    (effect,) = outcome.call.effects
    assert keeper.blobs.get(keeper.image(effect.before).entries[0].blob) == b"one\ntwo\n"
    assert effect.after == hashlib.sha256(b"one\n2\n").hexdigest()
    # a deletion the reading does not name (keep.txt is a write target): asked, denied
    outcome = reg.call("shell", {"command": "rm keep.txt"})
    assert outcome.call.refusal == "law1_denied" and len(operator.asked) == 1
    assert (ws / "keep.txt").exists()


# --------------------------------------------------------------------------- whole Systems
SANDBOXED = Config(durability="none", max_parallel=1, confirmation_timeout_s=2.0).model_copy(
    update={"tools": Config().tools.model_copy(update={"sandbox": "required"})}
)


def _entries(*calls: dict[str, Any], kind: str = "change") -> list[dict[str, Any]]:
    return [
        {"role": "perceiver", "content": {"intent": "the notes", "kind": kind, "criteria": []}},
        *({"role": "executor", "tool_calls": [call]} for call in calls),
        {"role": "executor", "times": 0, "content": "Done."},
    ]


def _shell(command: str) -> dict[str, Any]:
    return {"name": "shell", "arguments": {"command": command}}


def _bodies(store: Path, kind: type) -> list[Any]:
    return [e.body for e in all_events(store) if isinstance(e.body, kind)]


@pytest.mark.skipif(sys.platform != "linux", reason="the sandbox needs Linux")
def test_a_change_of_a_target_file_goes_through_headless(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    read_with_targets(monkeypatch, [TODO])
    text = "in notes/todo.txt write 'TODO: book the train' in capitals"
    entries = _entries(_shell("sed -i 's/book the train/BOOK THE TRAIN/' notes/todo.txt"))
    result, store = run_verified(tmp_path, entries, text, SANDBOXED, operator=None)
    assert "BOOK THE TRAIN" in (tmp_path / "workspace" / "notes" / "todo.txt").read_text()
    assert not _bodies(store, ConfirmationRequest)  # no operator, no question
    (ended,) = _bodies(store, ToolCallEnded)
    assert [c.basis for c in ended.call.law1] == ["remote", "reversible"]
    assert ended.call.effects[0].before and not result.law1_denied
    (subtask,) = _bodies(store, SubTask)
    assert (subtask.kind, subtask.targets) == ("change", [TODO])  # the Planner passed it on
    report = rerun(store)
    assert report.ok, str(report.divergence)


@pytest.mark.skipif(sys.platform != "linux", reason="the sandbox needs Linux")
def test_a_deletion_the_reading_does_not_name_still_asks_and_is_denied_headless(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    read_with_targets(monkeypatch, [TODO, Target(path="archive/old.log", role="write")])
    text = "remove archive/old.log and fix notes/todo.txt"
    _, store = run_verified(
        tmp_path, _entries(_shell("rm archive/old.log")), text, SANDBOXED, operator=None
    )
    assert (tmp_path / "workspace" / "archive" / "old.log").exists()
    (request,) = _bodies(store, ConfirmationRequest)
    assert request.target == "archive/old.log" and request.reason.startswith("would delete")
    (decision,) = _bodies(store, ConfirmationDecision)
    assert not decision.approved and decision.by == "queen"  # not the request's consent
    (ended,) = _bodies(store, ToolCallEnded)
    assert ended.call.refusal == "law1_denied"


@pytest.mark.skipif(sys.platform != "linux", reason="the sandbox needs Linux")
def test_a_deletion_the_reading_names_is_consented_by_the_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    read_with_targets(monkeypatch, [Target(path="archive/old.log", role="delete")])
    text = "remove archive/old.log"
    _, store = run_verified(
        tmp_path, _entries(_shell("rm archive/old.log")), text, SANDBOXED, operator=None
    )
    assert not (tmp_path / "workspace" / "archive" / "old.log").exists()
    (decision,) = _bodies(store, ConfirmationDecision)
    assert (decision.approved, decision.by) == (True, "request")
    assert decision.reason == "the request asks to delete archive/old.log"


@pytest.mark.skipif(sys.platform != "linux", reason="the sandbox needs Linux")
def test_verify_recomputes_the_basis_from_the_logged_targets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    read_with_targets(monkeypatch, [TODO])
    text = "in notes/todo.txt write 'TODO: book the train' in capitals"
    entries = _entries(_shell("sed -i 's/book the train/BOOK THE TRAIN/' notes/todo.txt"))
    _, store = run_verified(tmp_path, entries, text, SANDBOXED, operator=None)
    # the log says the subtask's reading named no targets: the change should have asked
    (env,) = [e for e in all_events(store) if isinstance(e.body, SubTask)]
    rewrite_event(
        store, msgspec.structs.replace(env, body=msgspec.structs.replace(env.body, targets=[]))
    )
    report = verify(store)
    assert not report.ok
    assert any("law1[1].basis" in str(m) for m in report.mismatches), report.mismatches


def test_an_older_log_call_decides_as_before() -> None:
    """A logged call from before targets (no SubTask targets, no images) recomputes by
    the plain rule."""
    from artoo.replay._verify_law1 import recompute_law1

    call = ToolCall(tool="write_file", effects=(_modified(before=""),))
    check = decide_effects(call.effects)
    assert recompute_law1(check, call, SubTask(subtask_id="s")) == check
    assert recompute_law1(check, call, None) == check
