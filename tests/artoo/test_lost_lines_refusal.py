"""End to end: a change that would lose lines of a file is refused unasked the first time
and the model told how to keep them (``Config.refuse_lost_lines``, refusal ``lost_lines``);
the request's own consent never covers it; the same loss again is the operator's; off, it
runs as before. The request and its file are the tests' own: a small model asked to
"append" wrote the new line alone over the file. These runs read the request with no
targets (an older reading): a change that loses no line is still Law 1's to ask about, and
the request's wording consents to no change (it consents only to a deletion its reading
names), so an approving operator stands in for the consent these tests once had.

The refusal's own tests run with ``Config.repair_lost_lines`` off (``KEEP``): on, code
makes the request's part of the refused change itself — its tests are at the end."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import msgspec

from artoo.replay import rerun, verify
from artoo.schemas import (
    ConfirmationDecision,
    ConfirmationRequest,
    CorrectionSignal,
    Envelope,
    ExecutionResult,
    FinalResult,
    LLMCall,
    ToolCallEnded,
)

from .helpers import CONFIG, DATA, all_events, change_entries, rewrite_event, run_verified

REQUEST = "add the line 'butter' to shopping.txt"
BEFORE = "milk\neggs\nbread\n"
KEEP = CONFIG.model_copy(update={"repair_lost_lines": False})


def approve(request: ConfirmationRequest) -> bool:
    """An operator who says yes to what Law 1 asks."""
    return True


def _write(content: str) -> dict[str, Any]:
    return {"name": "write_file", "arguments": {"path": "shopping.txt", "content": content}}


def _entries(*writes: str) -> list[dict[str, Any]]:
    return change_entries(
        "add butter to shopping.txt",
        "shopping.txt",
        [_write(w) for w in writes],
        "Added butter to shopping.txt.",
    )


def _run(
    tmp: Path, *writes: str, operator: Any = None, config: Any = KEEP
) -> tuple[FinalResult, list[Envelope]]:
    workspace = tmp / "workspace"
    shutil.copytree(DATA / "workspace", workspace)
    (workspace / "shopping.txt").write_text(BEFORE, encoding="utf-8")
    result, store = run_verified(tmp, _entries(*writes), REQUEST, config, operator=operator)
    return result, all_events(store)


def _ended(events: list[Envelope]) -> list[ToolCallEnded]:
    return [e.body for e in events if isinstance(e.body, ToolCallEnded)]


def test_a_lossy_write_is_refused_unasked_and_the_kept_write_accepted(tmp_path: Path) -> None:
    result, events = _run(tmp_path, "butter\n", BEFORE + "butter\n", operator=approve)
    assert (tmp_path / "workspace" / "shopping.txt").read_text() == BEFORE + "butter\n"
    lossy, kept = _ended(events)
    assert lossy.call.refusal == "lost_lines" and not lossy.call.ok
    assert "3 lines of shopping.txt" in lossy.shown and ">> shopping.txt" in lossy.shown
    assert [e.diff for e in lossy.call.effects] == ["-milk\n-eggs\n-bread\n+butter"]
    assert kept.call.ok and kept.call.refusal is None
    # only the kept write was asked, and the operator approved it
    asked = [e.body for e in events if isinstance(e.body, ConfirmationRequest)]
    decided = [e.body for e in events if isinstance(e.body, ConfirmationDecision)]
    assert len(asked) == 1 and asked[0].effects[0].diff == "+butter"
    assert [(d.approved, d.by) for d in decided] == [(True, "operator")]
    assert (result.status, result.established, result.law1_denied) == ("accept", "code", False)
    reran = rerun(tmp_path / "store")  # the refusal is served from the log, as it was made
    assert reran.ok, (reran.unanswered, reran.divergence)


def test_the_same_loss_again_is_the_operators_never_the_requests(tmp_path: Path) -> None:
    seen: list[ConfirmationRequest] = []

    def operator(request: ConfirmationRequest) -> bool:
        seen.append(request)
        return True

    _, events = _run(tmp_path, "butter\n", "butter\n", operator=operator)
    first, second = _ended(events)
    assert first.call.refusal == "lost_lines"
    assert second.call.ok and second.call.refusal is None  # the operator said yes
    assert len(seen) == 1 and seen[0].effects[0].diff == "-milk\n-eggs\n-bread\n+butter"
    decided = [e.body for e in events if isinstance(e.body, ConfirmationDecision)]
    assert [d.by for d in decided] != ["request"]
    assert (tmp_path / "workspace" / "shopping.txt").read_text() == "butter\n"
    # rerun: the first refusal served from the log, the second asks the operator again
    reran = rerun(tmp_path / "store")
    assert reran.ok, (reran.unanswered, reran.divergence)


def test_denied_by_no_operator_it_is_a_law1_denial(tmp_path: Path) -> None:
    result, events = _run(tmp_path, "butter\n", "butter\n")
    first, second = _ended(events)
    assert (first.call.refusal, second.call.refusal) == ("lost_lines", "law1_denied")
    assert (tmp_path / "workspace" / "shopping.txt").read_text() == BEFORE
    assert result.status != "accept" and result.law1_denied


def test_off_the_loss_is_asked_as_any_change(tmp_path: Path) -> None:
    # as before the field: no refusal, the change asked of the operator as it is
    config = KEEP.model_copy(update={"refuse_lost_lines": False, "consent_reads_back": False})
    _, events = _run(tmp_path, "butter\n", config=config, operator=approve)
    (only,) = _ended(events)
    assert only.call.ok and only.call.refusal is None
    assert (tmp_path / "workspace" / "shopping.txt").read_text() == "butter\n"


def test_verify_recomputes_the_refusal_from_the_logged_effects(tmp_path: Path) -> None:
    _run(tmp_path, "butter\n", BEFORE + "butter\n")
    store = tmp_path / "store"
    env = next(e for e in all_events(store) if isinstance(e.body, ExecutionResult))
    lossy, kept = env.body.tool_calls
    assert lossy.refusal == "lost_lines"
    # the refused write's effects edited into one that loses nothing: no reason to refuse
    effects = tuple(msgspec.structs.replace(e, diff="+butter") for e in lossy.effects)
    body = msgspec.structs.replace(
        env.body, tool_calls=[msgspec.structs.replace(lossy, effects=effects), kept]
    )
    rewrite_event(store, msgspec.structs.replace(env, body=body))
    found = {(m.seq, m.kind, m.field): m for m in verify(store).mismatches}
    m = found[(env.seq, "ExecutionResult", "tool_calls[0].refusal")]
    assert (m.logged, m.recomputed) == ("lost_lines", None)


def test_an_answer_after_a_refused_change_is_retried_until_the_change_is_made(
    tmp_path: Path,
) -> None:
    entries = _entries()
    lossy = {"role": "executor", "tool_calls": [_write("butter\n")]}
    gave_up = {"role": "executor", "content": "The result does not answer. Next tool call:"}
    kept = {"role": "executor", "tool_calls": [_write(BEFORE + "butter\n")]}
    entries[1:1] = [lossy, gave_up, kept]
    workspace = tmp_path / "workspace"
    shutil.copytree(DATA / "workspace", workspace)
    (workspace / "shopping.txt").write_text(BEFORE, encoding="utf-8")
    result, store = run_verified(tmp_path, entries, REQUEST, KEEP, operator=approve)
    events = all_events(store)
    (signal,) = [e.body for e in events if isinstance(e.body, CorrectionSignal)]
    assert "no call of this subtask changed the workspace (refused: lost_lines)" in (
        signal.feedback
    )
    assert (workspace / "shopping.txt").read_text() == BEFORE + "butter\n"
    assert (result.status, result.established) == ("accept", "code")
    reran = rerun(tmp_path / "store")
    assert reran.ok, (reran.unanswered, reran.divergence)


def test_off_an_answer_after_a_refused_change_passes(tmp_path: Path) -> None:
    config = KEEP.model_copy(update={"change_needs_effect": False})
    entries = _entries()
    entries[1:1] = [
        {"role": "executor", "tool_calls": [_write("butter\n")]},
        {"role": "executor", "content": "Done."},
    ]
    workspace = tmp_path / "workspace"
    shutil.copytree(DATA / "workspace", workspace)
    (workspace / "shopping.txt").write_text(BEFORE, encoding="utf-8")
    result, store = run_verified(tmp_path, entries, REQUEST, config)
    assert not [e for e in all_events(store) if isinstance(e.body, CorrectionSignal)]
    assert (workspace / "shopping.txt").read_text() == BEFORE
    assert result.status != "accept"


# ---------------------------------------------------------------- repair_lost_lines (on)


def test_an_append_written_alone_is_made_by_code_and_accepted(tmp_path: Path) -> None:
    result, events = _run(tmp_path, "butter\n", config=CONFIG, operator=approve)
    assert (tmp_path / "workspace" / "shopping.txt").read_text() == BEFORE + "butter\n"
    lossy, repair = _ended(events)
    assert lossy.call.refusal == "lost_lines" and "made next" in lossy.shown
    assert repair.tool_call_id.startswith("artoo-repair-")
    assert repair.call.args == {"command": "printf '%s\\n' butter >> shopping.txt"}
    assert repair.call.ok and [e.diff for e in repair.call.effects] == ["+butter"]
    decided = [e.body for e in events if isinstance(e.body, ConfirmationDecision)]
    assert [(d.approved, d.by) for d in decided] == [(True, "operator")]  # a gate as any call
    assert (result.status, result.established, result.law1_denied) == ("accept", "code", False)
    # the model's turn after the repair is offered no tool: it answers
    asked = [
        e.body.request for e in events if isinstance(e.body, LLMCall) and e.body.role == "executor"
    ]
    assert [bool(r.get("tools")) for r in asked] == [True, False]
    reran = rerun(tmp_path / "store")
    assert reran.ok, (reran.unanswered, reran.divergence)


def test_a_rename_written_alone_is_made_in_place(tmp_path: Path) -> None:
    source = (
        "def shout(message):\n    return message.upper()\n\n\ndef slugify(text):\n    return text\n"
    )
    fragment = "def yell(message):\n    return message.upper()\n"
    entries = change_entries(
        "rename shout to yell",
        "textutil.py",
        [{"name": "write_file", "arguments": {"path": "textutil.py", "content": fragment}}],
        "Renamed shout to yell.",
    )
    workspace = tmp_path / "workspace"
    shutil.copytree(DATA / "workspace", workspace)
    (workspace / "textutil.py").write_text(source, encoding="utf-8")
    result, store = run_verified(
        tmp_path,
        entries,
        "rename the function shout to yell in textutil.py",
        CONFIG,
        operator=approve,
    )
    assert (workspace / "textutil.py").read_text() == source.replace("shout", "yell")
    lossy, repair = _ended(all_events(store))
    assert lossy.call.refusal == "lost_lines"
    assert repair.call.ok and repair.call.args["command"].startswith("python3 -c ")
    assert result.status == "accept" and not result.law1_denied


def test_a_lossy_write_of_a_repaired_file_is_refused_unasked_again(tmp_path: Path) -> None:
    result, events = _run(tmp_path, "butter\n", "butter\n", config=CONFIG, operator=approve)
    first, repair, again = _ended(events)
    assert (first.call.refusal, repair.call.ok, again.call.refusal) == (
        "lost_lines",
        True,
        "lost_lines",
    )
    assert (tmp_path / "workspace" / "shopping.txt").read_text() == BEFORE + "butter\n"
    assert len([e for e in events if isinstance(e.body, ConfirmationRequest)]) == 1
    assert result.status == "accept" and not result.law1_denied  # asked of the repair alone


def test_a_change_the_request_does_not_word_is_not_repaired_the_file_is_shown(
    tmp_path: Path,
) -> None:
    result, events = _run(tmp_path, "cheese\n", config=CONFIG)
    lossy, shown = _ended(events)
    assert lossy.call.refusal == "lost_lines" and "made next" not in lossy.shown
    assert "shopping.txt as it is now is shown next" in lossy.shown
    assert shown.tool_call_id.startswith("artoo-repair-")
    assert (shown.call.tool, shown.call.args, shown.call.ok) == (
        "read_file",
        {"path": "shopping.txt"},
        True,
    )
    assert "milk" in shown.shown
    assert (tmp_path / "workspace" / "shopping.txt").read_text() == BEFORE
    assert result.status != "accept"


SALES = "region,amount\nnorth,1200\nwest,800\nsouth,950\n"
CHANGE = "in sales.csv change the amount of the west region from 800 to 850"


def _sales(tmp: Path, *calls: dict[str, Any]) -> tuple[FinalResult, list[Envelope], Path]:
    entries = change_entries("change west to 850", "sales.csv", calls, "West is now 850.")
    workspace = tmp / "workspace"
    shutil.copytree(DATA / "workspace", workspace)
    (workspace / "sales.csv").write_text(SALES, encoding="utf-8")
    result, store = run_verified(tmp, entries, CHANGE, CONFIG, operator=approve)
    reran = rerun(store)
    assert reran.ok, (reran.unanswered, reran.divergence)
    return result, all_events(store), workspace / "sales.csv"


def _sales_write(content: str) -> dict[str, Any]:
    return {"name": "write_file", "arguments": {"path": "sales.csv", "content": content}}


def test_a_made_up_rewrite_is_followed_by_the_file_and_the_right_write_accepted(
    tmp_path: Path,
) -> None:
    made_up = "region,amount\nwest,800\neast,1000\nwest,850\n"
    right = SALES.replace("west,800", "west,850")
    result, events, path = _sales(tmp_path, _sales_write(made_up), _sales_write(right))
    lossy, shown, written = _ended(events)
    assert lossy.call.refusal == "lost_lines"
    assert shown.call.tool == "read_file" and "north,1200" in shown.shown
    assert written.call.ok and path.read_text() == right
    assert result.status == "accept" and not result.law1_denied


def test_a_file_the_conversation_read_is_not_shown_again(tmp_path: Path) -> None:
    read = {"name": "read_file", "arguments": {"path": "./sales.csv"}}
    made_up = "region,amount\nwest,800\neast,1000\nwest,850\n"
    _, events, path = _sales(tmp_path, read, _sales_write(made_up))
    first, lossy = _ended(events)
    assert first.call.tool == "read_file" and lossy.call.refusal == "lost_lines"
    assert "shown next" not in lossy.shown and "sed -i on sales.csv" in lossy.shown
    assert path.read_text() == SALES
