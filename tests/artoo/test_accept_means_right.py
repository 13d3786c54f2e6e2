"""Issue 23, "accept means right", end to end on scripted Systems: a task is accepted only
when the answer is proven right — a Law 1 denial, a fabricated "Done", an answer that
describes the process, a check copied from the request, a number from a failed command
never end ``accept``; ``replay --verify`` recomputes each of these ends."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import artoo
from artoo.replay import verify
from artoo.schemas import CorrectionSignal, ExecutionResult, FinalResult, ReplanRequest
from artoo.testing import write_script

from .helpers import CONFIG, DATA, all_events
from .helpers import run_verified as _run


def _plan(instruction: str, times: int = 0) -> dict[str, Any]:
    return {
        "role": "planner",
        "times": times,
        "content": {"subtasks": [{"instruction": instruction, "sequence": 1}]},
    }


# --------------------------------------------------------------------------- Law 1
def test_a_law1_denial_never_ends_accept_and_the_output_says_what_was_not_done(
    tmp_path: Path,
) -> None:
    said = {"kind": "output_contains", "value": "deleted"}
    entries = [
        {
            "role": "perceiver",
            "content": {
                "intent": "delete notes/todo.txt",
                "kind": "change",
                "criteria": [{"text": "it says deleted", "mode": "verifiable", "check": said}],
            },
        },
        _plan("Delete notes/todo.txt with rm", times=1),
        _plan("Tidy the notes folder"),  # names no blocked target: not rejected
        {
            "role": "executor",
            "tool_calls": [{"name": "shell", "arguments": {"command": "rm notes/todo.txt"}}],
        },
        # the model's false claim: the deletion was denied, the file is there
        {"role": "executor", "times": 0, "content": "I deleted notes/todo.txt."},
    ]
    # the request names what it deletes: with its own consent on it would be approved
    asks = CONFIG.model_copy(update={"request_consent": False})
    result, _ = _run(tmp_path, entries, "delete notes/todo.txt", asks)
    assert (tmp_path / "workspace" / "notes" / "todo.txt").exists()
    assert result.law1_denied
    assert result.status not in ("accept", "success")
    assert "I deleted" not in result.output
    assert result.output.startswith("Not done")
    assert "rm notes/todo.txt" in result.output
    assert result.reason == "law1_denied"  # the lie passed its check: the denial ends it


_PASS = {"passed": True, "confidence": 0.95, "evidence": "looks right"}


def _validators_pass(*ids: str) -> list[dict[str, Any]]:
    """Model validators that pass whatever they are shown (the small model's say-so); with
    ``ids``, the Meta-Validator's answer for several task criteria at once."""
    many = {"verdicts": [{"criterion": i, **_PASS} for i in ids]}
    return [
        {"role": "agent_validator", "times": 0, "content": _PASS},
        {"role": "meta_validator", "times": 0, "content": many if ids else _PASS},
    ]


# --------------------------------------------------------------------------- the kind
def test_an_imperative_read_as_a_question_keeps_its_file_check_and_a_fabricated_done_fails(
    tmp_path: Path,
) -> None:
    """The hole: "Do …" was read as a question, its file check dropped, and an invented
    "Done. I created report.txt" accepted with no file. The model's reading (question) and
    code's (no question: no ``?``, no question word) disagree: the stricter duties keep
    the file check, and the file is not there."""
    exists = {"kind": "file_exists", "path": "report.txt"}
    entries = [
        {
            "role": "perceiver",
            "times": 0,
            "content": {
                "intent": "do the weekly report",
                "kind": "question",
                "criteria": [
                    {"text": "report.txt exists", "mode": "verifiable", "check": exists},
                    {"text": "the report covers the week", "mode": "plausible"},
                ],
            },
        },
        _plan("Write the weekly report"),
        {"role": "executor", "times": 0, "content": "Done. I created report.txt."},
        *_validators_pass("t1", "t2"),
    ]
    result, _ = _run(tmp_path, entries, "Do the weekly report from data/sales.csv in report.txt")
    assert not (tmp_path / "workspace" / "report.txt").exists()
    assert result.status != "accept"


def test_a_change_named_by_the_model_and_seen_by_code_keeps_its_answer_free_of_question_rules(
    tmp_path: Path,
) -> None:
    """The same imperative, read as a change, with the file really written and read back:
    accepted (the stricter duties apply only where the readings disagree)."""
    holds = {"kind": "file_contains", "path": "report.txt", "value": "week:"}
    entries = [
        {
            "role": "perceiver",
            "content": {
                "intent": "write the weekly report",
                "kind": "change",
                "criteria": [
                    {"text": "report.txt has the week", "mode": "verifiable", "check": holds}
                ],
            },
        },
        _plan("Write the weekly report"),
        {
            "role": "executor",
            "tool_calls": [
                {"name": "shell", "arguments": {"command": "echo 'week: ok' > report.txt"}}
            ],
        },
        {"role": "executor", "times": 0, "content": "Wrote report.txt."},
    ]
    result, _ = _run(tmp_path, entries, "Do the weekly report in report.txt")
    assert (tmp_path / "workspace" / "report.txt").exists()
    assert result.status == "accept"


# --------------------------------------------------------------------------- the answer
def test_an_answer_that_describes_the_process_does_not_answer_a_question(
    tmp_path: Path,
) -> None:
    """A model validator passes "The command successfully captured the output of the grep
    command…" (the issue's run); the request verdict, by code, does not."""
    entries = [
        {
            "role": "perceiver",
            "times": 0,
            "content": {
                "intent": "count the TODO lines",
                "kind": "question",
                "answer": "number",
                "criteria": [{"text": "the answer states how many TODO lines there are"}],
            },
        },
        _plan("Count the lines with TODO in notes/todo.txt"),
        {
            "role": "executor",
            "tool_calls": [
                {"name": "shell", "arguments": {"command": "grep -c TODO notes/todo.txt"}}
            ],
        },
        {
            "role": "executor",
            "times": 0,
            "content": "The command successfully captured the output of the grep command.",
        },
        *_validators_pass(),
    ]
    result, _ = _run(tmp_path, entries, "How many lines of notes/todo.txt mention TODO?")
    assert result.status != "accept" and result.status != "success"


# --------------------------------------------------------------------------- proof
def test_an_output_check_copied_from_the_request_is_not_proof(tmp_path: Path) -> None:
    """The issue's run: ``output_contains 'artoo'`` (the request's own word) passed on an
    answer that repeats the question. The request verdict fails it; and an answer with a
    real value, read by one tool, is not accepted either — one tool result and a check of
    the answer's text are not proof by code (at best success)."""
    copied = {"kind": "output_contains", "value": "artoo"}
    entries = [
        {
            "role": "perceiver",
            "times": 0,
            "content": {
                "intent": "say what greet('artoo') returns",
                "kind": "question",
                "answer": "value",
                "criteria": [{"text": "names artoo", "mode": "verifiable", "check": copied}],
            },
        },
        _plan("Read src/util.py and say what greet('artoo') returns"),
        {
            "role": "executor",
            "tool_calls": [{"name": "read_file", "arguments": {"path": "src/util.py"}}],
        },
        {"role": "executor", "content": "It returns a string that includes 'artoo'."},
        {
            "role": "executor",
            "tool_calls": [{"name": "read_file", "arguments": {"path": "src/util.py"}}],
        },
        {"role": "executor", "times": 0, "content": "It returns 'hello artoo'."},
    ]
    text = "What does greet('artoo') in src/util.py return?"
    result, store = _run(tmp_path, entries, text)
    assert result.status == "success" and result.established == "model"
    assert result.output == "It returns 'hello artoo'."
    # the first answer, which only repeated the request, failed the request verdict
    (first,) = [e.body for e in all_events(store) if isinstance(e.body, ReplanRequest)]
    request = {v.criterion_id: v for v in first.task_verdicts}["request"]
    assert not request.passed and "copied" not in request.evidence


def test_a_number_printed_by_a_failed_command_does_not_ground_the_answer(
    tmp_path: Path,
) -> None:
    """``cat`` of a missing file piped to ``wc -l`` prints 0 and exits 0, with the error
    on stderr: the 0 grounded the answer before; a command that wrote an error grounds
    nothing now, and the model validators' pass does not save it."""
    entries = [
        {
            "role": "perceiver",
            "times": 0,
            "content": {
                "intent": "count the rows of data/sales_2024.csv",
                "kind": "question",
                "answer": "number",
                "criteria": [{"text": "states the number of rows"}],
            },
        },
        _plan("Count the rows of data/sales_2024.csv"),
        {
            "role": "executor",
            "tool_calls": [
                {"name": "shell", "arguments": {"command": "cat data/sales_2024.csv | wc -l"}}
            ],
        },
        {"role": "executor", "times": 0, "content": "The file has 0 rows."},
        *_validators_pass(),
    ]
    config = CONFIG.model_copy(update={"ggs": CONFIG.ggs.model_copy(update={"max_replans": 0})})
    result, store = _run(tmp_path, entries, "How many rows does data/sales_2024.csv have?", config)
    assert result.status == "abandon"
    (ran,) = [
        c for e in all_events(store) if isinstance(e.body, ExecutionResult)
        for c in e.body.tool_calls
    ]  # fmt: skip
    assert ran.exit_code == 0 and (ran.stdout or "").strip() == "0" and ran.stderr


def test_an_awk_sum_of_a_missing_column_is_one_derivation_not_proof(tmp_path: Path) -> None:
    """awk summing a column that does not exist prints 0 (exit 0, no error): grounded in
    that output, passed by the model, but one command's word — success at best, never
    accept; and a zero is never what derivations prove, so nothing is asked of it; a
    second, different tool that agrees on a non-zero total makes it proof. (Without the
    check code writes for a question about a table: with it, code computes 4250 and the 0
    fails outright — tests/artoo/test_table_value_run.py.)"""

    def entries(calls: list[dict[str, Any]], answer: str, times: int = 1) -> list[dict[str, Any]]:
        return [
            {
                "role": "perceiver",
                "content": {
                    "intent": "total the amount column",
                    "kind": "question",
                    "answer": "number",
                },
            },
            _plan("Add up the amount column of data/sales.csv"),
            *[
                entry
                for _ in range(times)
                for entry in (
                    {"role": "executor", "tool_calls": calls},
                    {"role": "executor", "content": answer},
                )
            ],
        ]

    text = "What is the total of the amount column in data/sales.csv?"
    awk9 = "awk -F, 'NR > 1 { s += $9 } END { print s + 0 }' data/sales.csv"
    wrong = [{"name": "shell", "arguments": {"command": awk9}}]
    untabled = CONFIG.model_copy(update={"code_table_check": False})
    result, store = _run(tmp_path / "a", entries(wrong, "The total is 0.", times=2), text, untabled)
    assert result.status == "success" and result.established == "model"
    asked = [e.body.corroborate for e in all_events(store) if isinstance(e.body, CorrectionSignal)]
    # a zero is never what derivations prove (tests/actors/test_proof_zero.py): no
    # second derivation of it is asked for
    assert asked == []
    awk2 = "awk -F, 'NR > 1 { s += $2 } END { print s }' data/sales.csv"
    right = [
        {"name": "shell", "arguments": {"command": awk2}},
        {"name": "read_file", "arguments": {"path": "data/sales.csv"}},
    ]
    result, _ = _run(tmp_path / "b", entries(right, "The total is 4250."), text, untabled)
    assert result.status == "accept" and result.established == "code"
    tabled, _ = _run(tmp_path / "c", entries(wrong, "The total is 0.", times=4), text)
    assert tabled.status != "accept"


# --------------------------------------------------------------------------- shown
def test_run_replay_and_the_audit_report_say_how_the_answer_was_established(
    tmp_path: Path, capsys: Any
) -> None:
    from artoo.cli import main

    workspace = tmp_path / "workspace"
    shutil.copytree(DATA / "workspace", workspace)
    model = write_script(
        tmp_path / "s.toml",
        [
            {
                "role": "perceiver",
                "content": {
                    "intent": "greet",
                    # no kind: a sure change would need a call that changed the workspace
                    "criteria": [{"text": "the reply greets the user", "mode": "plausible"}],
                },
            },
            _plan("Greet the user"),
            {"role": "executor", "content": "Hello there!"},
            {"role": "meta_validator", "content": _PASS},
        ],
    )
    store = tmp_path / "store"
    code = main(
        ["run", "greet me", "--store", str(store), "--model", model, "--workspace", str(workspace)]
    )
    out = capsys.readouterr().out
    assert code == 0 and "success" in out
    assert "judged by a model (some of it not proven by code)" in out
    (final,) = [e.body for e in all_events(store) if isinstance(e.body, FinalResult)]
    assert main(["replay", str(store), "--task", final.task_id]) == 0  # the timeline
    assert "judged by a model" in capsys.readouterr().out
    for fmt in ("md", "html"):
        assert main(["audit", str(store), "--format", fmt]) == 0
        assert "judged by a model" in capsys.readouterr().out, fmt
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

    said = {"kind": "output_contains", "value": "hello"}
    entries = [
        {
            "role": "perceiver",
            "times": 0,
            "content": {
                "intent": "say hello",
                # no kind: a sure change would need a call that changed the workspace
                "criteria": [{"text": "says hello", "mode": "verifiable", "check": said}],
            },
        },
        {**_plan("Say hello"), "times": 0},
        {"role": "executor", "content": "hello"},
        {"role": "executor", "times": 3, "content": "bye"},  # an attempt and two retries
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
        # "hello" is the request's own word: success, not accept (not proof by code)
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
    backend's whole cap."""
    from artoo.actors.llm._scripted import ScriptedBackend

    caps: dict[str, set[int | None]] = {}
    complete = ScriptedBackend.complete

    def recording(self: ScriptedBackend, request: Any) -> Any:
        caps.setdefault(request.role, set()).add(request.max_output_tokens)
        return complete(self, request)

    monkeypatch.setattr(ScriptedBackend, "complete", recording)
    entries = [
        {
            "role": "perceiver",
            "content": {
                "intent": "greet",
                "kind": "change",
                "criteria": [{"text": "the reply greets the user", "mode": "plausible"}],
            },
        },
        _plan("Greet the user"),
        {"role": "executor", "content": "Hello there!"},
        {"role": "meta_validator", "content": _PASS},
    ]
    planned = CONFIG.model_copy(update={"direct_kinds": []})  # round 0 asks the Planner too
    _run(tmp_path, entries, "greet me", planned)
    assert caps == {
        "perceiver": {384},
        "planner": {512},
        "executor": {512},
        "meta_validator": {256},
    }
