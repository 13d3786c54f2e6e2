"""Memory that learns (issue 21): the very same request, once accepted, replays its proven
approach and only the answer is asked of the model — still judged by every check.

The Perceiver reads it as the accepted episode recorded its reading, with no model call;
the plan remembered from that episode carries the step's recorded ``shell`` commands —
only those that backed the answer —, which the Executor runs itself before the model's
first turn; the model answers from what they printed: a count asked again costs one
model call, not three. One step of a question is asked as the request itself, not as the
step a model wrote; only an accepted episode is replayed. A paraphrase is read by the
model. ``replay --verify`` (its ``reading`` check too) and ``--rerun`` pass on the store.
The request and its file are the demo workspace's."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import msgspec

import artoo
from artoo.actors.roles.perceiver import Readings
from artoo.actors.roles.planner import (
    Calibration,
    plan_violations,
    proven_commands,
    reused_plan,
)
from artoo.replay import rerun, verify
from artoo.schemas import (
    POLICY,
    Config,
    DispatchManifest,
    EpisodeStep,
    FinalResult,
    LLMCall,
    Megram,
    MegramRecorded,
    MemoryRecall,
    Reading,
    SubTask,
    SubTaskOutcome,
    TaskSpec,
    ToolCallEnded,
)
from artoo.testing import write_script

from .helpers import CONFIG, DATA, rewrite_event, task_events

ASK = "how many lines are in notes/todo.txt?"
WC = "wc -l notes/todo.txt"
SHOWN = "7 notes/todo.txt"  # what wc printed: the model answers once it sees it


def _entries(answer: str = "7") -> list[dict[str, Any]]:
    """A count question (code counts the lines of the file it names); the Executor's
    model runs ``wc -l`` until a result shows the count, then answers ``answer`` — as a
    model does, whoever made the call."""
    reading = {"intent": "count the lines", "kind": "question", "answer": "number"}
    return [
        {"role": "perceiver", "times": 0, "content": {**reading, "count": "lines"}},
        {"role": "executor", "times": 0, "match": SHOWN, "content": answer},
        {
            "role": "executor",
            "times": 0,
            "tool_calls": [{"name": "shell", "arguments": {"command": WC}}],
        },
    ]


def _runs(
    tmp: Path, answers: list[str], text: str | list[str] = ASK
) -> list[tuple[FinalResult, list[Any]]]:
    """Run the request once per answer on one store, a System opened for each run (as a
    host reopens it); each run's FinalResult and logged envelopes."""
    workspace = tmp / "workspace"
    if not workspace.exists():
        shutil.copytree(DATA / "workspace", workspace)
    texts = [text] * len(answers) if isinstance(text, str) else text
    scripts = [_entries(answer) for answer in answers]
    return _run_scripts(
        tmp, workspace, list(zip(scripts, [CONFIG] * len(answers), texts, strict=True))
    )


def _run_scripts(
    tmp: Path, workspace: Path, runs: list[tuple[list[dict[str, Any]], Config, str]]
) -> list[tuple[FinalResult, list[Any]]]:
    """Run each ``(script, config, request)`` in order on one store, a System opened for
    each run (as a host reopens it); each run's FinalResult and logged envelopes."""
    out = []
    for i, (entries, config, ask) in enumerate(runs):
        model = write_script(tmp / f"s{i}.toml", entries)
        with artoo.System.open(
            tmp / "store", model=model, workspace=workspace, config=config
        ) as system:
            handle = system.submit(ask)
            result = handle.result(30)
            system.flush(5)
        out.append((result, task_events(tmp / "store", handle.task_id)))
    return out


def _calls(events: list[Any]) -> list[str]:
    return [e.body.role for e in events if isinstance(e.body, LLMCall)]


def _ran(events: list[Any]) -> list[tuple[str, str]]:
    return [
        (e.body.tool_call_id, e.body.call.args.get("command", ""))
        for e in events
        if isinstance(e.body, ToolCallEnded)
    ]


def _episode_megram(request: str, **fields: Any) -> Megram:
    """An accepted episode of ``request`` (any other Megram field given)."""
    base: dict[str, Any] = {
        "id": "e1",
        "level": "M",
        "created_at": 1.0,
        "space": "intent:x",
        "entity": "env:local",
        "state": "accept",
    }
    return Megram(**{**base, **fields, "request": request})


def test_the_same_request_replays_its_command_and_asks_only_the_answer(tmp_path: Path) -> None:
    runs = _runs(tmp_path, ["7", "7", "7"])
    assert [r.status for r, _ in runs] == ["accept"] * 3
    # run 1: the model reads the request, calls wc, answers; then only the answer is asked
    assert [_calls(e) for _, e in runs] == [
        ["perceiver", "executor", "executor"],
        ["executor"],
        ["executor"],
    ]
    specs = [next(e.body for e in events if isinstance(e.body, TaskSpec)) for _, events in runs]
    episodes = [_episode(events) for _, events in runs]
    assert specs[0].reused == "" and episodes[0].reading is not None
    assert [s.reused for s in specs[1:]] == [episodes[0].id, episodes[1].id]  # the newest
    for spec in specs[1:]:  # read as run 1 read it, its count check with it
        assert (spec.intent, spec.kind, spec.shape) == ("count the lines", "question", "number")
        assert spec.criteria == specs[0].criteria and spec.slug == specs[0].slug
    assert _ran(runs[0][1])[0][0] != "artoo-run-1"  # the model's own call
    for _, events in runs[1:]:
        (manifest,) = [e.body for e in events if isinstance(e.body, DispatchManifest)]
        assert [s.commands for s in manifest.subtasks] == [[WC]]
        assert "accepted episode" in manifest.rationale
        assert _ran(events) == [("artoo-run-1", WC)]  # run by the Executor, not asked for
    report = verify(tmp_path / "store")
    # each reading: run 1's recomputed from the model's answer, the two reused from memory
    assert report.ok and report.checked["reading"] == 3
    reran = rerun(tmp_path / "store")
    assert reran.ok, (reran.unanswered, reran.divergence)
    # one task alone, on a store seeded with the log before it: memory as the task saw it
    (third,) = {e.task_id for e in runs[2][1]}
    reran = rerun(tmp_path / "store", third)
    assert reran.ok, (reran.unanswered, reran.divergence)


def _episode(events: list[Any]) -> Megram:
    (recorded,) = [e.body.megram for e in events if isinstance(e.body, MegramRecorded)]
    return recorded


def test_a_wrong_answer_after_the_replayed_command_is_not_accepted(tmp_path: Path) -> None:
    runs = _runs(tmp_path, ["7", "9"])
    (_, _), (second, events) = runs
    assert ("artoo-run-1", WC) in _ran(events)
    assert second.status != "accept"
    # code counted 7 lines; the answer's 9 failed the reused reading's count check
    failed = [
        v
        for e in events
        if isinstance(e.body, SubTaskOutcome)
        for v in e.body.verdicts
        if not v.passed
    ]
    counted = [v.evidence for v in failed if v.evidence.startswith("the answer states 9:")]
    assert counted and all("lines code counts in notes/todo.txt" in e for e in counted)
    assert not any("7" in e for e in counted)  # code's count is not told: it would be copied
    assert verify(tmp_path / "store").ok


def test_a_paraphrase_is_read_by_the_model_and_replays_no_command(tmp_path: Path) -> None:
    runs = _runs(tmp_path, ["7", "7"], text=[ASK, "count the lines of notes/todo.txt"])
    (_, events) = runs[1]
    assert all(not call_id.startswith("artoo-run") for call_id, _ in _ran(events))
    assert _calls(events)[0] == "perceiver"
    (spec,) = [e.body for e in events if isinstance(e.body, TaskSpec)]
    assert spec.reused == ""


def test_case_and_spacing_aside_the_request_is_the_same() -> None:
    episode = _episode_megram(
        ASK,
        space="intent:notes-todo-txt-lines",
        reading=Reading(intent="count the lines", kind="question", shape="number", policy=POLICY),
    )
    readings = Readings()
    readings.add(episode)
    readings.add(msgspec.structs.replace(episode, id="e2", state="success"))  # not kept
    spec = readings.spec("How many  lines are in notes/todo.txt?")
    assert spec is not None and (spec.reused, spec.kind) == ("e1", "question")
    assert readings.spec("how many lines does notes/todo.txt have?") is None
    readings.forget("e1")
    assert readings.spec(ASK) is None


def test_proven_commands_are_shell_lines_on_workspace_paths() -> None:
    known = ["glob", "read_file", "write_file", "shell", "load_data"]
    step = EpisodeStep(
        instruction="count",
        tools=[],
        commands=[
            "read_file notes/a.txt",  # another tool's call
            "wc -l /etc/passwd",  # an absolute path
            "cat ../secret",  # out of the workspace
            "echo $HOME",  # an expansion
            "cat ~/.ssh/id",  # a home path
            "wc -l notes/a.txt >/tmp/out",  # a redirection out of the workspace
            "sort --output=/etc/x notes/a.txt",  # an option's path
            "curl -H 'token: [REDACTED]' x",  # a secret memory does not hold
            "wc -l notes/a.txt",
            "grep -c TODO notes/a.txt",
            "wc -l notes/a.txt",  # once
            "ls src 2>/dev/null",
            "wc -w notes/b.txt",  # past the three
        ],
    )
    assert proven_commands(step, known) == [
        "wc -l notes/a.txt",
        "grep -c TODO notes/a.txt",
        "ls src 2>/dev/null",
    ]
    assert (
        proven_commands(EpisodeStep(instruction="x", tools=["read_file"], commands=["ls"]), known)
        == []
    )
    assert proven_commands(step, ["read_file"]) == []  # no shell to run them


def test_a_command_naming_a_blocked_target_breaks_the_plan() -> None:
    subtask = SubTask(subtask_id="s1", instruction="count", commands=["wc -l archive/old.log"])
    calibration = Calibration(blocked_targets=["archive/old.log"], must_not=["archive/old.log"])
    (violation,) = plan_violations([subtask], calibration)
    assert violation.target == "archive/old.log"


def test_verify_names_a_reading_memory_did_not_record(tmp_path: Path) -> None:
    runs = _runs(tmp_path, ["7", "7"])
    (env,) = [e for e in runs[1][1] if isinstance(e.body, TaskSpec)]
    tampered = msgspec.structs.replace(env.body, intent="count the words")
    rewrite_event(tmp_path / "store", msgspec.structs.replace(env, body=tampered))
    report = verify(tmp_path / "store")
    found = [(m.kind, m.field) for m in report.mismatches]
    # the episode run 2 recorded holds the tampered reading too
    assert found == [("MegramRecorded", "reading"), ("TaskSpec", "intent")]


MODEL_STEP = "Run the command `wc -l notes/todo.txt` to count the number of lines in the file."
"""A step a model wrote for the request in a planned round (seen on the real model)."""


def _planned_then_reused(tmp: Path) -> list[tuple[FinalResult, list[Any]]]:
    """Run 1's round 0 (the request itself) states no count; its round 1 is planned by
    the model: one step in the model's words, which ran ``wc -l`` and answered 7 —
    accepted. Run 2 asks the very same request; its model, asked that step's words,
    describes what the command did (as the real model did), asked the request, answers
    the number."""
    workspace = tmp / "workspace"
    shutil.copytree(DATA / "workspace", workspace)
    plan = {
        "subtasks": [{"instruction": MODEL_STEP, "sequence": 1, "tools": ["shell"]}],
        "rationale": "count with wc",
    }
    unsure = {"role": "executor", "times": 0, "match": f"Subtask: {ASK}", "content": "Not sure."}
    scripts = [
        [_entries()[0], unsure, {"role": "planner", "times": 0, "content": plan}, *_entries()[1:]],
        [
            {
                "role": "executor",
                "times": 0,
                "match": "Subtask: Run the command",
                "content": "The command `wc -l notes/todo.txt` successfully counted the lines.",
            },
            *_entries(),
        ],
    ]
    configs = [CONFIG.model_copy(update={"max_retries": 0}), CONFIG]
    return _run_scripts(tmp, workspace, list(zip(scripts, configs, [ASK, ASK], strict=True)))


def test_a_reused_question_is_asked_as_the_request_not_as_the_step_a_model_wrote(
    tmp_path: Path,
) -> None:
    (first, events1), (second, events2) = _planned_then_reused(tmp_path)
    assert first.status == "accept" and _episode(events1).steps[0].instruction == MODEL_STEP
    (manifest,) = [e.body for e in events2 if isinstance(e.body, DispatchManifest)]
    assert "accepted episode" in manifest.rationale
    (sub,) = manifest.subtasks
    # the request itself, the step's tools and command kept
    assert sub.instruction == ASK
    assert (sub.tools, sub.commands) == (["shell"], [WC])
    assert second.status == "accept" and _calls(events2) == ["executor"]
    assert verify(tmp_path / "store").ok
    reran = rerun(tmp_path / "store")
    assert reran.ok, (reran.unanswered, reran.divergence)


def test_a_remembered_plan_of_several_steps_keeps_its_instructions() -> None:
    steps = [
        EpisodeStep(instruction="list the files", sequence=1, commands=["ls src"]),
        EpisodeStep(instruction="count them", sequence=2, commands=["ls src | wc -l"]),
    ]
    episode = _episode_megram("how many files are in src?", steps=steps)
    recall = MemoryRecall(space="intent:x", entity="env:local", episodes=[episode])
    spec = TaskSpec(text="how many files are in src?", intent="count", slug="x", kind="question")
    ids = iter(["a", "b", "c", "d"])
    reused = reused_plan(recall, spec, 0, lambda: next(ids))
    assert reused is not None
    assert [s.instruction for s in reused[1]] == ["list the files", "count them"]
    # one step of a question: asked as the request itself
    one = msgspec.structs.replace(
        recall, episodes=[msgspec.structs.replace(episode, steps=steps[1:])]
    )
    reused = reused_plan(one, spec, 0, lambda: "x")
    assert reused is not None and reused[1][0].instruction == spec.text
    change = msgspec.structs.replace(spec, kind="change")
    reused = reused_plan(one, change, 0, lambda: "x")
    assert reused is not None and reused[1][0].instruction == "count them"  # not a question


def test_a_remembered_step_naming_a_path_the_request_does_not_keeps_its_words() -> None:
    step = EpisodeStep(instruction="Read data/sales.csv and add up the amount column")
    text = "report the total of this year's sales figures"
    episode = _episode_megram(text, steps=[step])
    recall = MemoryRecall(space="intent:x", entity="env:local", episodes=[episode])
    spec = TaskSpec(text=text, intent="total", slug="x", kind="question")
    reused = reused_plan(recall, spec, 0, lambda: "x")
    assert reused is not None and reused[1][0].instruction == step.instruction


WORDS_ASK = "how many words does notes/todo.txt contain?"


def _words_runs(tmp: Path) -> list[tuple[FinalResult, list[Any]]]:
    """A word count asked twice: run 1's model runs ``wc -l`` and ``wc -w`` and answers
    the words (30); run 2 reuses the plan, its model answering whatever number it sees
    first (as the real model did: 7, the lines, once both commands ran again)."""
    workspace = tmp / "workspace"
    shutil.copytree(DATA / "workspace", workspace)
    reading = {"intent": "count the words", "kind": "question", "answer": "number"}
    perceive = {**_entries()[0], "content": {**reading, "count": "words"}}
    both = [
        {"name": "shell", "arguments": {"command": "wc -l notes/todo.txt"}},
        {"name": "shell", "arguments": {"command": "wc -w notes/todo.txt"}},
    ]
    scripts = [
        [
            perceive,
            {"role": "executor", "times": 0, "match": "30 notes", "content": "30 words."},
            {"role": "executor", "times": 0, "tool_calls": both},
        ],
        [
            {"role": "executor", "times": 0, "match": SHOWN, "content": "7 words."},
            {"role": "executor", "times": 0, "match": "30 notes", "content": "30 words."},
        ],
    ]
    return _run_scripts(tmp, workspace, [(e, CONFIG, WORDS_ASK) for e in scripts])


def test_a_reuse_runs_only_the_command_that_backed_the_answer(tmp_path: Path) -> None:
    (first, events1), (second, events2) = _words_runs(tmp_path)
    assert first.status == "accept"
    assert _episode(events1).steps[0].commands == ["wc -w notes/todo.txt"]
    assert _ran(events2) == [("artoo-run-1", "wc -w notes/todo.txt")]
    assert second.status == "accept" and _calls(events2) == ["executor"]
    assert verify(tmp_path / "store").ok


def test_only_an_accepted_episode_is_replayed() -> None:
    """A ``success`` rests on a model's word: its plan is not replayed, command and all (a
    small model's wrong count of 2 ``.py`` files, ended ``success``, once was)."""
    step = EpisodeStep(instruction=ASK, tools=["shell"], commands=["find src/*.py | wc -l"])
    spec = TaskSpec(text=ASK, intent="count", slug="x", kind="question")
    for state, replayed in (("success", False), ("abandon", False), ("accept", True)):
        episode = _episode_megram(ASK, state=state, steps=[step])
        recall = MemoryRecall(space="intent:x", entity="env:local", episodes=[episode])
        ids = iter(["a", "b"])
        got = reused_plan(recall, spec, 0, ids.__next__)
        assert (got is not None) == replayed, state
