"""Issue 23, "accept means right", end to end on scripted Systems under policy 1: a task
is accepted only when code proved the answer — a Law 1 denial, a fabricated "Done", an
answer that describes the process, a model's check copied from the request, a number from
a failed command, one derivation of a wrong total never end ``accept``; ``replay
--verify`` recomputes each of these ends."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import artoo
from artoo.replay import verify
from artoo.schemas import (
    CorrectionSignal,
    ExecutionResult,
    FinalResult,
    SubTaskOutcome,
    TaskSpec,
    ToolCallEnded,
)
from artoo.testing import write_script

from .helpers import CONFIG, DATA, all_events
from .helpers import run_verified as _run


def _plan(instruction: str, times: int = 0, tools: list[str] | None = None) -> dict[str, Any]:
    subtask: dict[str, Any] = {"instruction": instruction, "sequence": 1}
    if tools is not None:
        subtask["tools"] = tools
    return {"role": "planner", "times": times, "content": {"subtasks": [subtask]}}


def _perceive(intent: str, kind: str, times: int = 1, **reading: Any) -> dict[str, Any]:
    """The Perceiver's reading: its ``kind`` and any other field (targets, answer, …)."""
    return {
        "role": "perceiver",
        "times": times,
        "content": {"intent": intent, "kind": kind, **reading},
    }


def _shell(command: str) -> dict[str, Any]:
    return {"name": "shell", "arguments": {"command": command}}


def _verdicts(store: Path) -> list[Any]:
    """Every verdict the task's subtasks ended with."""
    return [
        v for e in all_events(store) if isinstance(e.body, SubTaskOutcome) for v in e.body.verdicts
    ]


# --------------------------------------------------------------------------- Law 1
def test_a_law1_denial_never_ends_accept_and_the_output_says_what_was_not_done(
    tmp_path: Path,
) -> None:
    """The request deletes what its reading names; the operator (none: the Queen) denies
    ``rm``, and the model claims the file gone. Code's ``changed`` check catches the
    claim (nothing was applied) in every round, and the output says what was not done."""
    entries = [
        _perceive(
            "delete notes/todo.txt",
            "change",
            targets=[{"path": "notes/todo.txt", "role": "delete"}],
        ),
        _plan("Delete notes/todo.txt with rm", times=1),
        _plan("Tidy the notes folder"),  # names no blocked target: not rejected
        {"role": "executor", "tool_calls": [_shell("rm notes/todo.txt")]},
        # the model's false claim: the deletion was denied, the file is there
        {"role": "executor", "times": 0, "content": "I deleted notes/todo.txt."},
    ]
    # the request names what it deletes: with its own consent on it would be approved
    asks = CONFIG.model_copy(update={"request_consent": False})
    result, store = _run(tmp_path, entries, "delete notes/todo.txt", asks)
    assert (tmp_path / "workspace" / "notes" / "todo.txt").exists()
    assert result.law1_denied
    assert result.status not in ("accept", "success")
    assert "I deleted" not in result.output
    assert result.output.startswith("Not done")
    assert "rm notes/todo.txt" in result.output
    # the claim of a later round, with no call, failed code's check of the change
    assert any(
        not v.passed and v.evidence.startswith("nothing was changed") for v in _verdicts(store)
    )


def test_a_denial_ends_the_task_even_when_its_change_was_proven(tmp_path: Path) -> None:
    """The change the request asks is made and read back by code — it would be accepted —
    but on the way the operator denied a deletion the reading does not name: a denial is
    never a success (reason ``law1_denied``), and the output says what was not done."""
    text = "append the line 'TODO: call Bob' to notes/todo.txt"
    todo = (DATA / "workspace" / "notes" / "todo.txt").read_text()
    write = {
        "name": "write_file",
        "arguments": {"path": "notes/todo.txt", "content": todo + "TODO: call Bob\n"},
    }
    entries = [
        _perceive(
            "append a line to the todo list",
            "change",
            targets=[{"path": "notes/todo.txt", "role": "write"}],
            values=["TODO: call Bob"],
        ),
        _plan("Append the line 'TODO: call Bob' to notes/todo.txt", tools=["write_file"]),
        {
            "role": "executor",
            "match": "Subtask: append",
            "tool_calls": [_shell("rm archive/old.log")],
        },
        {"role": "executor", "match": "Subtask: append", "content": "Done."},
        {"role": "executor", "match": "Subtask: Append", "tool_calls": [write]},
        {"role": "executor", "match": "Subtask: Append", "content": "Appended the line."},
    ]
    result, _ = _run(tmp_path, entries, text)
    workspace = tmp_path / "workspace"
    assert (workspace / "archive" / "old.log").exists()
    assert (workspace / "notes" / "todo.txt").read_text().endswith("TODO: call Bob\n")
    assert result.law1_denied and result.status == "abandon"
    assert result.reason == "law1_denied"  # every check passed: the denial ends it
    assert result.output.startswith("Not done") and "rm archive/old.log" in result.output


# --------------------------------------------------------------------------- the kind
def test_a_request_read_mixed_keeps_its_change_and_a_fabricated_done_fails(
    tmp_path: Path,
) -> None:
    """The hole: "Do …" was read as a question, its file check dropped, and an invented
    "Done. I created report.txt" accepted with no file. A request that must both answer
    and make a file is read ``mixed`` by the model, naming report.txt to create: the
    change must be there — and it is not, so the claim fails code's ``changed`` check."""
    entries = [
        _perceive(
            "do the weekly report",
            "mixed",
            times=0,
            targets=[{"path": "report.txt", "role": "create"}],
        ),
        _plan("Write the weekly report"),
        {"role": "executor", "times": 0, "content": "Done. I created report.txt."},
    ]
    config = CONFIG.model_copy(update={"ggs": CONFIG.ggs.model_copy(update={"max_replans": 1})})
    text = "Do the weekly report from data/sales.csv in report.txt"
    result, store = _run(tmp_path, entries, text, config)
    assert not (tmp_path / "workspace" / "report.txt").exists()
    (spec,) = [e.body for e in all_events(store) if isinstance(e.body, TaskSpec)]
    assert spec.kind == "mixed"
    assert ("report.txt", "create") in [(t.path, t.role) for t in spec.targets]
    assert "changed" in [c.check.kind for c in spec.criteria if c.check]
    assert result.status not in ("accept", "success")
    assert any(
        not v.passed and v.evidence.startswith("nothing was changed") for v in _verdicts(store)
    )


def test_a_request_read_as_a_question_writes_nothing_and_a_fabricated_done_is_no_proof(
    tmp_path: Path,
) -> None:
    """The same request read ``question`` with a file to make: a question writes nothing
    (the stricter reading), so the file to make is dropped, not turned into a change; a
    question is answered, never changed — no write is offered, no criterion asks for a
    change. The invented "Done" states no proven answer: never ``accept`` (free text
    ends ``success`` at best, ``established`` "model": the end rests on the model's
    reading and word, and the FinalResult says so)."""
    entries = [
        _perceive(
            "do the weekly report",
            "question",
            times=0,
            targets=[{"path": "report.txt", "role": "create"}],
        ),
        _plan("Write the weekly report"),
        {"role": "executor", "times": 0, "content": "Done. I created report.txt."},
    ]
    config = CONFIG.model_copy(update={"ggs": CONFIG.ggs.model_copy(update={"max_replans": 1})})
    text = "Do the weekly report from data/sales.csv in report.txt"
    result, store = _run(tmp_path, entries, text, config)
    assert not (tmp_path / "workspace" / "report.txt").exists()
    (spec,) = [e.body for e in all_events(store) if isinstance(e.body, TaskSpec)]
    assert spec.kind == "question"
    assert all(t.role == "read" for t in spec.targets)
    assert "report.txt" not in [t.path for t in spec.targets]
    assert any("a question writes nothing" in n for n in spec.notes)
    assert "changed" not in [c.check.kind for c in spec.criteria if c.check]
    # free text is never proven: at best it rests on the model's word, and says so
    assert result.status != "accept" and result.established in ("model", "none")


def test_a_change_read_back_is_accepted_its_answer_held_to_no_question_rule(
    tmp_path: Path,
) -> None:
    """The same kind of request read as a change, the file really written and the value the
    request gives read back by code: accepted, though its answer states nothing."""
    write = {"name": "write_file", "arguments": {"path": "report.txt", "content": "week: ok\n"}}
    entries = [
        _perceive(
            "write the weekly report",
            "creation",
            targets=[{"path": "report.txt", "role": "create"}],
            values=["week: ok"],
        ),
        {"role": "executor", "tool_calls": [write]},
        {"role": "executor", "times": 0, "content": "Wrote report.txt."},
    ]
    result, _ = _run(tmp_path, entries, "Do the weekly report in report.txt: 'week: ok'")
    assert (tmp_path / "workspace" / "report.txt").read_text() == "week: ok\n"
    assert (result.status, result.established) == ("accept", "code")


# --------------------------------------------------------------------------- the answer
def test_an_answer_that_describes_the_process_does_not_answer_a_question(
    tmp_path: Path,
) -> None:
    """A model validator passed "The command successfully captured the output of the grep
    command…" (the issue's run); no model judges it now: code's ``answered`` check finds no
    number in it, in every attempt."""
    entries = [
        _perceive("count the TODO lines", "question", times=0, answer="number"),
        _plan("Count the lines with TODO in notes/todo.txt"),
        {"role": "executor", "tool_calls": [_shell("grep -c TODO notes/todo.txt")]},
        {
            "role": "executor",
            "times": 0,
            "content": "The command successfully captured the output of the grep command.",
        },
    ]
    result, store = _run(tmp_path, entries, "How many lines of notes/todo.txt mention TODO?")
    assert result.status != "accept" and result.status != "success"
    assert any("states no number" in v.evidence for v in _verdicts(store))


# --------------------------------------------------------------------------- proof
def test_a_check_copied_from_the_request_is_no_proof_code_runs_the_call(tmp_path: Path) -> None:
    """The issue's run: ``output_contains 'artoo'`` (the request's own word) passed on an
    answer that repeats the question. A model's check is dropped now; code runs the
    request's own call in the sandbox, and the answer must state what it returned: the
    repeat fails, the value is accepted (by code)."""
    copied = {"kind": "output_contains", "value": "artoo"}
    entries = [
        _perceive(
            "say what greet('artoo') returns",
            "question",
            times=0,
            answer="value",
            call="greet('artoo')",
            criteria=[{"text": "names artoo", "mode": "verifiable", "check": copied}],
        ),
        {
            "role": "executor",
            "tool_calls": [{"name": "read_file", "arguments": {"path": "src/util.py"}}],
        },
        {"role": "executor", "content": "It returns a string that includes 'artoo'."},
        {"role": "executor", "times": 0, "content": "It returns 'hello artoo'."},
    ]
    text = "What does greet('artoo') in src/util.py return?"
    result, store = _run(tmp_path, entries, text)
    assert (result.status, result.established) == ("accept", "code")
    assert result.output == "It returns 'hello artoo'."
    (spec,) = [e.body for e in all_events(store) if isinstance(e.body, TaskSpec)]
    assert [c.check.kind for c in spec.criteria if c.check] == ["answered", "evaluates"]
    # the first answer, which only repeated the request, failed code's run of the call
    (signal,) = [e.body for e in all_events(store) if isinstance(e.body, CorrectionSignal)]
    (failed,) = [v for v in signal.verdicts if not v.passed]
    assert "greet('artoo')" in failed.evidence and "does not state" in failed.evidence
    # code's value is not told: a model told it would copy it, and derive nothing itself
    assert "hello artoo" not in failed.evidence
    # code ran the call itself, and its own run shows the value the answer had to state
    ran = [
        e.body.call
        for e in all_events(store)
        if isinstance(e.body, ToolCallEnded) and e.body.call.by == "code"
    ]
    (run,) = ran
    assert "greet" in run.args["command"] and "hello artoo" in (run.stdout or "")


def test_a_number_printed_by_a_failed_command_does_not_ground_the_answer(
    tmp_path: Path,
) -> None:
    """``cat`` of a missing file piped to ``wc -l`` prints 0 and exits 0, with the error
    on stderr: a command that wrote an error shows nothing, so the 0 traces to no tool
    result and the answer fails code's check."""
    entries = [
        _perceive("count the rows of data/sales_2024.csv", "question", times=0, answer="number"),
        {"role": "executor", "tool_calls": [_shell("cat data/sales_2024.csv | wc -l")]},
        {"role": "executor", "times": 0, "content": "The file has 0 rows."},
    ]
    config = CONFIG.model_copy(update={"ggs": CONFIG.ggs.model_copy(update={"max_replans": 0})})
    result, store = _run(tmp_path, entries, "How many rows does data/sales_2024.csv have?", config)
    assert result.status == "abandon"
    (ran,) = [
        c for e in all_events(store) if isinstance(e.body, ExecutionResult)
        for c in e.body.tool_calls
    ]  # fmt: skip
    assert ran.exit_code == 0 and (ran.stdout or "").strip() == "0" and ran.stderr
    assert any("which no tool result shows" in v.evidence for v in _verdicts(store))


def test_an_awk_sum_of_a_missing_column_is_one_derivation_not_proof(tmp_path: Path) -> None:
    """awk summing a column that does not exist prints 0 (exit 0, no error): the answer
    traces to that output, but one command's word is no proof. The reading names no key
    or unit code could derive a total from, so a second derivation is asked in a fresh
    conversation, told only not to use awk: python adds the column to 4250 — two
    derivations disagree, and the task fails. With the right column the two agree by
    different methods: proof (accept)."""
    awk9 = "awk -F, 'NR > 1 { s += $9 } END { print s + 0 }' data/sales.csv"
    awk2 = "awk -F, 'NR > 1 { s += $2 } END { print s }' data/sales.csv"
    python = (
        "python3 -c \"import csv; print(sum(int(r['amount']) "
        "for r in csv.DictReader(open('data/sales.csv'))))\""
    )

    def entries(command: str, answer: str) -> list[dict[str, Any]]:
        return [
            _perceive("total the amount column", "question", answer="number"),
            {"role": "executor", "match": "another method", "tool_calls": [_shell(python)]},
            {"role": "executor", "match": "another method", "content": "The total is 4250."},
            {"role": "executor", "tool_calls": [_shell(command)]},
            {"role": "executor", "content": answer},
        ]

    text = "What is the total of the amount column in data/sales.csv?"
    once = CONFIG.model_copy(update={"ggs": CONFIG.ggs.model_copy(update={"max_replans": 0})})
    result, store = _run(tmp_path / "a", entries(awk9, "The total is 0."), text, once)
    assert (result.status, result.established) == ("abandon", "none")
    asked = [e.body.corroborate for e in all_events(store) if isinstance(e.body, CorrectionSignal)]
    assert asked == ["0"]  # asked afresh, never told the 0
    assert any(
        v.criterion_id == "agree" and "two derivations disagree" in v.evidence
        for v in _verdicts(store)
    )
    result, _ = _run(tmp_path / "b", entries(awk2, "The total is 4250."), text)
    assert (result.status, result.established) == ("accept", "code")


# --------------------------------------------------------------------------- shown
def test_run_replay_and_the_audit_report_say_how_the_answer_was_established(
    tmp_path: Path, capsys: Any
) -> None:
    """A free-text answer is never proven (no value code could compare): success, on the
    model's word — which ``artoo run``, the replay timeline and every audit format say."""
    from artoo.cli import main

    workspace = tmp_path / "workspace"
    shutil.copytree(DATA / "workspace", workspace)
    model = write_script(
        tmp_path / "s.toml",
        [
            _perceive("greet", "question", answer="text"),
            {"role": "executor", "content": "Hello there!"},
        ],
    )
    store = tmp_path / "store"
    code = main(
        ["run", "greet me", "--store", str(store), "--model", model, "--workspace", str(workspace)]
    )
    out = capsys.readouterr().out
    assert code == 0 and "success" in out
    assert "rests on a model's word" in out
    (final,) = [e.body for e in all_events(store) if isinstance(e.body, FinalResult)]
    assert main(["replay", str(store), "--task", final.task_id]) == 0  # the timeline
    assert "rests on a model's word" in capsys.readouterr().out
    for fmt, said in (("md", "rests on a model's word"), ("html", "rests on a model&#x27;s word")):
        assert main(["audit", str(store), "--format", fmt]) == 0
        assert said in capsys.readouterr().out, fmt
    assert main(["audit", str(store), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [t["established"] for t in report["tasks"]] == ["model"]


# --------------------------------------------------------------------------- Caution
def _mixed_outcomes(tmp_path: Path, approve: bool) -> tuple[Any, list[Any]]:
    """A store where one request succeeded, then was abandoned (its tag's outcomes mixed:
    Memory's action caution), and a third run of it (a light paraphrase: the same intent
    tag) with an operator who approves or denies; the third FinalResult and what was
    asked. The replan budget of the third run is 3."""
    from artoo.schemas import ConfirmationRequest

    entries = [
        _perceive("say hello", "question", times=0, answer="text"),
        {**_plan("Say hello"), "times": 0},
        {"role": "executor", "content": "hello"},
        {"role": "executor", "times": 3, "content": ""},  # an attempt and two retries: no answer
        {"role": "executor", "times": 0, "content": "hello"},
    ]
    workspace = tmp_path / "workspace"
    shutil.copytree(DATA / "workspace", workspace)
    model = write_script(tmp_path / "s.toml", entries)
    asked: list[ConfirmationRequest] = []

    def operator(request: ConfirmationRequest) -> bool:
        asked.append(request)
        return approve

    def config(replans: int) -> Any:
        return CONFIG.model_copy(
            update={"ggs": CONFIG.ggs.model_copy(update={"max_replans": replans})}
        )

    store = tmp_path / "store"
    with artoo.System.open(
        store, model=model, workspace=workspace, config=config(0), operator=operator
    ) as s:
        # free text: success, not accept (nothing code could prove); then no answer at all
        assert s.run("say hello", timeout=30).status == "success"
        assert s.run("say hello", timeout=30).status == "abandon"
    assert asked == []  # no caution yet: one outcome, then two
    with artoo.System.open(
        store, model=model, workspace=workspace, config=config(3), operator=operator
    ) as s:
        third = s.run("Say hello!", timeout=30)
        s.flush(5)
    report = verify(store)
    assert report.ok, [str(m) for m in report.mismatches]
    from artoo.replay import rerun

    # the recorded decision answers the rerun's ask
    again = rerun(store, third.task_id)
    assert again.ok, str(again.divergence)
    return third, asked


def test_an_intent_level_caution_asks_the_operator_once_per_task(tmp_path: Path) -> None:
    """Paper §6.4, end to end: one request that succeeded, then was abandoned, leaves its tag
    with mixed outcomes (Memory's action: caution). The third run of the same request asks
    the operator once, through the Queen, before any plan; approved, it runs."""
    from artoo.schemas import MemoryRecall

    third, asked = _mixed_outcomes(tmp_path, approve=True)
    assert third.status == "success"
    assert [(a.gate, a.target) for a in asked] == [("caution", "intent:hello-say")]
    recalls = [
        e.body
        for e in all_events(tmp_path / "store")
        if isinstance(e.body, MemoryRecall) and e.task_id == third.task_id
    ]
    assert recalls[0].action == "caution"


def test_a_denied_intent_level_caution_ends_the_task_at_once(tmp_path: Path) -> None:
    """A denial at the intent-level Caution ends the task at once — abandon, reason
    ``caution_denied``, its output saying nothing was done — not one model-less failed
    round after another until the replan budget (3) is spent."""
    from artoo.schemas import LLMCall, PlanDirective

    third, asked = _mixed_outcomes(tmp_path, approve=False)
    assert [a.gate for a in asked] == ["caution"]
    assert third.status == "abandon" and third.reason == "caution_denied"
    assert third.output.startswith("Not done") and "nothing was planned or run" in third.output
    events = [e for e in all_events(tmp_path / "store") if e.task_id == third.task_id]
    assert [e for e in events if isinstance(e.body, PlanDirective)] == []  # no later round
    assert [e.body.role for e in events if isinstance(e.body, LLMCall)] == ["perceiver"]
    assert sum(isinstance(e.body, FinalResult) for e in events) == 1


# --------------------------------------------------------------------------- calls
def test_each_role_asks_for_an_answer_no_longer_than_it_needs(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """Per-role output caps (Config.output_caps): a reading, a plan and a verdict are
    small JSON objects, an Executor turn a tool call or a short answer: none keeps the
    backend's whole cap. (Round 0 answers nothing, so round 1 is the Planner's; code
    writes every criterion, so no validator asks a model.)"""
    from artoo.actors.llm._scripted import ScriptedBackend

    caps: dict[str, set[int | None]] = {}
    complete = ScriptedBackend.complete

    def recording(self: ScriptedBackend, request: Any) -> Any:
        caps.setdefault(request.role, set()).add(request.max_output_tokens)
        return complete(self, request)

    monkeypatch.setattr(ScriptedBackend, "complete", recording)
    entries = [
        _perceive("count the lines", "question", answer="number", count="lines"),
        _plan("Count the lines of notes/todo.txt", tools=["shell"]),
        {"role": "executor", "match": "Subtask: how many", "content": "I cannot tell."},
        {"role": "executor", "tool_calls": [_shell("wc -l notes/todo.txt")]},
        {"role": "executor", "content": "7 lines."},
    ]
    once = CONFIG.model_copy(update={"max_retries": 0})
    result, _ = _run(tmp_path, entries, "how many lines are in notes/todo.txt?", once)
    assert (result.status, result.established) == ("accept", "code")
    assert caps == {"perceiver": {384}, "planner": {512}, "executor": {512}}
