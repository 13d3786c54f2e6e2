"""End to end: an ask for a second derivation (``CorrectionSignal.corroborate``) starts a
fresh Executor conversation — the system prompt and the subtask, told only which method
the first derivation used, nothing of its answer — whose tool calls carry
``ToolCall.conversation == 1``; the fresh answer is proof only by another method (the
same command run again is one method). And the subtask prompt lists only the criteria a model
judges (code decides the others). Run on a workspace of the test's own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from artoo.actors.roles.executor import SYSTEM_PROMPT, subtask_prompt
from artoo.schemas import (
    Check,
    CorrectionSignal,
    Criterion,
    FinalResult,
    LLMCall,
    SubTask,
    SubTaskOutcome,
    ToolCallEnded,
)

from .helpers import CONFIG, all_events, run_verified

BINS = "bolts\nnuts\nwashers\nhinges\nscrews\nrivets\n"
QUESTION = "how many entries does inventory/bins.txt list?"
WC = {"name": "shell", "arguments": {"command": "wc -l inventory/bins.txt"}}
GREP = {"name": "shell", "arguments": {"command": "grep -c '' inventory/bins.txt"}}


def _entries(*attempts: tuple[dict[str, Any], str], **reading: Any) -> list[dict[str, Any]]:
    """A how-many question read with no count's unit, so code derives nothing (unless
    ``reading`` gives one), and the Executor's attempts: one tool call, then an answer,
    each (round 0 is the request itself: no plan is asked)."""
    executor: list[dict[str, Any]] = []
    for call, answer in attempts:
        executor += [
            {"role": "executor", "tool_calls": [call]},
            {"role": "executor", "content": answer},
        ]
    perceive = {"intent": "count the bins", "kind": "question", "answer": "number", **reading}
    return [{"role": "perceiver", "content": perceive}, *executor]


def _run(tmp: Path, entries: list[dict[str, Any]]) -> tuple[FinalResult, list[Any]]:
    (tmp / "workspace" / "inventory").mkdir(parents=True)
    (tmp / "workspace" / "inventory" / "bins.txt").write_text(BINS)
    result, store = run_verified(tmp, entries, QUESTION, CONFIG)
    return result, [e.body for e in all_events(store)]


def _executor_calls(bodies: list[Any]) -> list[LLMCall]:
    return [b for b in bodies if isinstance(b, LLMCall) and b.role == "executor"]


def test_a_second_derivation_is_asked_in_a_fresh_conversation(tmp_path: Path) -> None:
    result, bodies = _run(tmp_path, _entries((WC, "6 entries."), (GREP, "6 entries.")))
    assert (result.status, result.established) == ("accept", "code")
    (signal,) = [b for b in bodies if isinstance(b, CorrectionSignal)]
    assert signal.corroborate == "6"
    first, _answered, fresh, again = _executor_calls(bodies)
    (subtask,) = [b for b in bodies if isinstance(b, SubTask)]
    # the new conversation holds the system prompt and the subtask, told only the method
    # not to repeat
    told = "Work it out with another method than: `wc -l inventory/bins.txt`."
    assert signal.feedback == told
    assert fresh.request["messages"] == [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": subtask_prompt(subtask) + "\n" + told},
    ]
    assert first.request["messages"] == [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": subtask_prompt(subtask)},
    ]
    assert fresh.request.get("tool_choice") == "required"  # a tool call first, as at the start
    seen = str(fresh.request["messages"]) + str(again.request["messages"])
    assert "6 entries" not in seen and "second derivation" not in seen  # nor the answer
    assert "6 inventory" not in seen  # nor what the first call printed
    ended = [b.call for b in bodies if isinstance(b, ToolCallEnded)]
    assert [(c.args["command"], c.conversation, c.attempt) for c in ended] == [
        ("wc -l inventory/bins.txt", 0, 1),
        ("grep -c '' inventory/bins.txt", 1, 2),
    ]


def test_a_command_run_again_the_same_way_afresh_is_not_a_second_method(
    tmp_path: Path,
) -> None:
    """The same ``wc -l`` in both conversations: they agree on 6, but by one method — the
    second derivation must come by another (docs/proof.md; the first test's ``grep -c``
    does) — so the answer rests on a model's word: success, not accept."""
    result, bodies = _run(tmp_path, _entries((WC, "6 entries."), (WC, "6 entries.")))
    assert (result.status, result.established) == ("success", "model")
    ended = [b.call for b in bodies if isinstance(b, ToolCallEnded)]
    assert [(c.args["command"], c.conversation) for c in ended] == [
        ("wc -l inventory/bins.txt", 0),
        ("wc -l inventory/bins.txt", 1),  # a new conversation: not refused as a repeat
    ]
    (outcome,) = [b for b in bodies if isinstance(b, SubTaskOutcome)]
    assert (outcome.status, outcome.asked) == ("matched", "6")  # they agreed


def test_a_rejected_result_is_retried_in_the_same_conversation(tmp_path: Path) -> None:
    """Only the ask for a second derivation starts afresh: a retry after a failed check
    still continues the conversation with the validator's reason, in conversation 0."""
    # code counts the lines of the file (the reading's unit): the first answer's 7 fails
    entries = _entries((WC, "7 entries."), (WC, "6 entries."), count="lines")
    result, bodies = _run(tmp_path, entries)
    assert (result.status, result.established) == ("accept", "code")
    (signal,) = [b for b in bodies if isinstance(b, CorrectionSignal)]
    assert not signal.corroborate
    retry = _executor_calls(bodies)[2]
    assert retry.request["messages"][-1]["content"].startswith("The validator rejected the result")
    assert any("7 entries." == m.get("content") for m in retry.request["messages"])
    ended = [b.call for b in bodies if isinstance(b, ToolCallEnded)]
    assert [c.conversation for c in ended] == [0, 0]


def test_the_subtask_prompt_lists_only_the_criteria_a_model_judges() -> None:
    counted = Criterion(
        id="t1",
        text="The answer states the number of lines in inventory/bins.txt.",
        mode="verifiable",
        check=Check(kind="count_matches", path="inventory/bins.txt", value="lines"),
    )
    judged = Criterion(id="t2", text="the answer names the unit", mode="plausible")
    subtask = SubTask(subtask_id="s", instruction=QUESTION, criteria=[counted, judged])
    prompt = subtask_prompt(subtask)
    assert "Success criteria:\n- the answer names the unit" in prompt
    assert "number of lines" not in prompt
    only_checked = subtask_prompt(SubTask(subtask_id="s", instruction=QUESTION, criteria=[counted]))
    assert only_checked == f"Subtask: {QUESTION}" and "Success criteria" not in only_checked
