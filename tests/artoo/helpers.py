"""Shared builders for the end-to-end tests: the demo workspace, scripts, the log."""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Iterable, Mapping
from importlib import resources
from pathlib import Path
from typing import Any

import msgspec

import artoo
from artoo.eventstore import EventLog
from artoo.replay import Divergence, rerun, verify
from artoo.schemas import Config, Envelope, FinalResult, Target, TaskRequest
from artoo.testing import write_script

DATA = Path(str(resources.files("artoo") / "demo_data"))

CONFIG = Config(durability="none", max_parallel=2, confirmation_timeout_s=2.0)

PERCEIVE: dict[str, Any] = {
    "role": "perceiver",
    "times": 0,
    "content": {"intent": "say hello", "kind": "question", "answer": "text"},
}


def task_events(store: Path, task_id: str) -> list[Envelope]:
    """Every logged envelope of one task (the store must not be open elsewhere)."""
    with EventLog.open(store / "events", durability="none") as log:
        return list(log.read_task(task_id))


def all_events(store: Path) -> list[Envelope]:
    """Every logged envelope (the store must not be open elsewhere)."""
    with EventLog.open(store / "events", durability="none") as log:
        return list(log.read())


def simple_plan(instruction: str = "Say hello", times: int = 0) -> dict[str, Any]:
    """A planner entry with one subtask and no criteria."""
    return {
        "role": "planner",
        "times": times,
        "content": {"subtasks": [{"instruction": instruction, "sequence": 1}]},
    }


def change_entries(
    intent: str, path: str, calls: Iterable[dict[str, Any]], answer: str
) -> list[dict[str, Any]]:
    """A change's script: the Perceiver reads it (``intent``) as a change whose one
    criterion is that ``path`` exists — no check reads the file back —, the Executor makes
    each of ``calls`` in a turn of its own, then answers ``answer``."""
    exists = {"kind": "file_exists", "path": path}
    criterion = {"text": f"{path} exists", "mode": "verifiable", "check": exists}
    return [
        {
            "role": "perceiver",
            "content": {
                "intent": intent,
                "kind": "change",
                "answer": "text",
                "criteria": [criterion],
            },
        },
        *({"role": "executor", "tool_calls": [call]} for call in calls),
        {"role": "executor", "times": 0, "content": answer},
    ]


def rm_script_entries(times: int = 3, tasks: int = 1) -> list[dict[str, Any]]:
    """``tasks`` tasks whose executor asks to run ``rm archive/old.log`` (a Law 1
    confirmation); ``times`` plans in all."""
    return [
        {
            "role": "perceiver",
            "times": tasks,
            "content": {"intent": "delete old log", "kind": "change", "answer": "text"},
        },
        simple_plan("Delete archive/old.log with rm", times=times),
        {
            "role": "executor",
            "times": tasks,
            "tool_calls": [{"name": "shell", "arguments": {"command": "rm archive/old.log"}}],
        },
        {"role": "executor", "times": 0, "content": "done"},
    ]


def rewrite_event(store: Path, env: Envelope) -> None:
    """Replace one logged envelope in place (re-encoded), as a tampered log would be."""
    import plyvel

    from artoo.eventstore.eventlog import event_key
    from artoo.schemas import encode_envelope

    db = plyvel.DB(str(store / "events"))
    try:
        db.put(event_key(env.seq), encode_envelope(env))
    finally:
        db.close()


def until(probe: Callable[[], Any], timeout: float = 20.0) -> Any:
    """Poll ``probe`` until it returns something truthy (wall-clock bound); its value."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = probe()
        if got:
            return got
        time.sleep(0.02)
    raise AssertionError("condition not reached")


def run_verified(
    tmp: Path,
    entries: list[dict[str, Any]],
    text: str,
    config: Config = CONFIG,
    operator: Callable[[Any], bool | None] | None = None,
    files: Mapping[str, str] | None = None,
) -> tuple[FinalResult, Path]:
    """Run ``text`` on a System scripted with ``entries``, over a copy of the demo workspace
    in ``tmp`` with ``files`` (workspace path → text) written into it (``operator``
    answering Law 1's questions); its store (``tmp / "store"``) must pass
    ``replay --verify``."""
    workspace = tmp / "workspace"
    if not workspace.exists():
        shutil.copytree(DATA / "workspace", workspace)
    for path, content in (files or {}).items():
        (workspace / path).parent.mkdir(parents=True, exist_ok=True)
        (workspace / path).write_text(content, encoding="utf-8")
    model = write_script(tmp / "s.toml", entries)
    with artoo.System.open(
        tmp / "store", model=model, workspace=workspace, config=config, operator=operator
    ) as s:
        result = s.submit(text).result(30)
        s.flush(5)
    report = verify(tmp / "store")
    assert report.ok, [str(m) for m in report.mismatches]
    return result, tmp / "store"


def replays_as_before(store: Path, field: str) -> Divergence | None:
    """Drop ``field`` from every task's logged Config, as a log from before it was
    written, where it ran off: the log verifies, reruns as it ran — every call served,
    the only difference the field itself at the TaskRequest (a field newer than the log
    shows there, a known limit), none once that is set aside (a what-if to off). Returns the
    first divergence of a rerun with the field on, for the caller to name."""
    for request in [e for e in all_events(store) if isinstance(e.body, TaskRequest)]:
        logged = {k: v for k, v in request.body.config.items() if k != field}
        body = msgspec.structs.replace(request.body, config=logged)
        rewrite_event(store, msgspec.structs.replace(request, body=body))
    assert verify(store).ok
    reran = rerun(store)
    assert not reran.unanswered, reran.unanswered
    assert reran.divergence is not None and reran.divergence.kind == "TaskRequest"
    assert reran.divergence.diff == [(f"body.config.{field}", None, False)]
    same = rerun(store, settings=[f"{field}=false"])
    assert same.ok and not same.unanswered, (same.unanswered, same.divergence)
    return rerun(store, settings=[f"{field}=true"]).divergence


def read_with_targets(monkeypatch: Any, targets: Iterable[Target]) -> None:
    """Have the Perceiver's reading name ``targets`` (``TaskSpec.targets``, which the
    Planner gives each SubTask with the reading's kind): the reading's targets as the
    model's answer would state them, for a scripted run."""
    from artoo.actors.roles import perceiver
    from artoo.actors.verification.reading import criteria_of

    build = perceiver.read_spec
    named = list(targets)

    def with_targets(text: str, answer: Any, seen: Any, environment: str = "local") -> Any:
        spec = msgspec.structs.replace(build(text, answer, seen, environment), targets=named)
        return msgspec.structs.replace(spec, criteria=criteria_of(spec))

    monkeypatch.setattr(perceiver, "read_spec", with_targets)


def delete_log_entries(tasks: int = 1, plans: int = 0) -> list[dict[str, Any]]:
    """``tasks`` tasks of "delete the old log", each read as a change that deletes
    archive/old.log; round 0 (the request itself) runs ``rm archive/old.log`` — a deletion
    the request's text does not spell out, so Law 1 asks the operator; ``plans`` plans of
    later rounds (0: none), each naming rm again."""
    rm = {"name": "shell", "arguments": {"command": "rm archive/old.log"}}
    reading = {
        "intent": "delete the old log",
        "kind": "change",
        "targets": [{"path": "archive/old.log", "role": "delete"}],
    }
    planned = [simple_plan("Delete archive/old.log with rm", times=plans)] if plans else []
    return [
        {"role": "perceiver", "times": tasks, "content": reading},
        *planned,
        {"role": "executor", "times": tasks, "tool_calls": [rm]},
        {"role": "executor", "times": 0, "content": "done"},
    ]
