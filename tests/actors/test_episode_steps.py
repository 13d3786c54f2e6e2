"""An accepted episode's megram names what worked: the plan's subtasks, their tools and
the exact commands of the calls that produced the answer (secrets redacted)."""

from __future__ import annotations

import msgspec
from hypothesis import given
from hypothesis import strategies as st

from artoo.actors.roles._gradient import command_text, episode_steps
from artoo.actors.tools import Redactor
from artoo.schemas import OutcomeSummary, SubTask, SubTaskOutcome, ToolCall

from .ggs_builders import S, env_failure, gradient, outcome, reading, v

PLAN = [
    SubTask(subtask_id="s1", instruction="Count the lines of notes/x.txt", tools=["shell"]),
]
WC = ToolCall(tool="shell", args={"command": "wc -l notes/x.txt"}, target="notes/x.txt")
FAILED = ToolCall(tool="shell", args={"command": "cat nope.txt"}, ok=False, error="no file")


def test_an_accepted_episodes_megram_names_its_commands() -> None:
    g = gradient(spec=reading("how many lines are in notes/x.txt?"), redact=Redactor(["s3cret"]))
    g.plan = [*PLAN, SubTask(subtask_id="s2", instruction="Check with token s3cret")]
    summary = OutcomeSummary(
        outcomes=[
            outcome("s1", [v("c", True)], calls=[FAILED, WC, WC]),
            outcome("s2", [v("d", True)], calls=[ToolCall(tool="read_file", args={"path": "a"})]),
        ],
        task_verdicts=[v("t", True)],
    )
    step = g.step(summary, elapsed_ms=S, now=100.0)
    (megram,) = step.megrams
    assert megram.state == "accept" and megram.request == "how many lines are in notes/x.txt?"
    first, second = megram.steps
    assert first.instruction == "Count the lines of notes/x.txt" and first.tools == ["shell"]
    assert first.commands == ["wc -l notes/x.txt"]  # the failed call is not the approach
    assert second.commands == ["read_file a"] and "s3cret" not in second.instruction


def test_an_abandoned_episode_records_what_it_tried() -> None:
    g = gradient(spec=reading("r"))
    g.plan = PLAN
    g.replans = 99  # the resource budget is spent: abandon
    summary = OutcomeSummary(outcomes=[env_failure("s1", "shell", "a")], task_verdicts=[])
    step = g.step(summary, elapsed_ms=10_000 * S, now=1.0)
    assert step.final is not None and step.final.status == "abandon"
    (tried,) = step.megrams[-1].steps  # the approach that failed, for MUST NOT
    assert tried.instruction == "Count the lines of notes/x.txt" and tried.commands == []


@given(
    st.text(max_size=40),
    st.text(st.characters(blacklist_categories=["Z", "C"]), min_size=1, max_size=8),
)
def test_a_secret_never_survives_into_a_step(command: str, secret: str) -> None:
    call = ToolCall(tool="shell", args={"command": command + secret})
    sub = SubTask(subtask_id="s", instruction=secret + " x")
    (step,) = episode_steps([sub], [outcome("s", calls=[call])], Redactor([secret]))
    shown = [c.replace("[REDACTED]", "") for c in [*step.commands, step.instruction]]
    assert all(secret not in text for text in shown)


def test_command_text_of_a_non_shell_tool_names_its_arguments() -> None:
    assert command_text(ToolCall(tool="glob", args={"pattern": "src/*.py"})) == "glob src/*.py"


WORDS = "how many words does notes/todo.txt contain?"
LINES = ToolCall(
    tool="shell", args={"command": "wc -l notes/todo.txt"}, stdout="7 notes/todo.txt\n"
)
COUNT = ToolCall(
    tool="shell", args={"command": "wc -w notes/todo.txt"}, stdout="30 notes/todo.txt\n"
)
STEP = SubTask(subtask_id="s", instruction=WORDS, tools=["shell"])


def _answered(answer: str, calls: list[ToolCall]) -> SubTaskOutcome:
    return msgspec.structs.replace(outcome("s", calls=calls), output=answer)


def test_a_step_records_the_calls_that_back_its_answer_not_one_made_on_the_way() -> None:
    # the model counted lines first, then words, and answered the words: a reuse that ran
    # both showed the model 7 first, and it answered 7
    done = _answered("notes/todo.txt contains 30 words.", [LINES, COUNT])
    (step,) = episode_steps([STEP], [done], shape="number")
    assert step.commands == ["wc -w notes/todo.txt"]
    # a reading with no value to trace (free text, or none): every call that worked
    for shape in ("text", ""):
        (step,) = episode_steps([STEP], [done], shape=shape)
        assert step.commands == ["wc -l notes/todo.txt", "wc -w notes/todo.txt"], shape
    # no number stated, or none a call backs: every call that worked
    for answer in ("It has many words.", "notes/todo.txt contains 31 words."):
        (step,) = episode_steps([STEP], [_answered(answer, [LINES, COUNT])], shape="number")
        assert step.commands == ["wc -l notes/todo.txt", "wc -w notes/todo.txt"]


def test_the_gradient_records_the_backing_calls_of_its_readings_shape() -> None:
    for shape, expected in (
        ("number", ["wc -w notes/todo.txt"]),
        ("text", ["wc -l notes/todo.txt", "wc -w notes/todo.txt"]),
    ):
        g = gradient(spec=reading(WORDS, "question", shape))
        g.plan = [STEP]
        done = _answered("notes/todo.txt contains 30 words.", [LINES, COUNT])
        summary = OutcomeSummary(outcomes=[done], task_verdicts=[v("t", True)])
        (megram,) = g.step(summary, elapsed_ms=S, now=100.0).megrams
        (step,) = megram.steps
        assert step.commands == expected, shape
