"""``artoo demo``: five scripted scenarios over a bundled sample workspace, offline."""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from rich.console import Console

from artoo.eventstore import EventLog
from artoo.schemas import Config, DispatchManifest, FinalResult, GGSDecision, LLMCall

from ._live import shorten, summary_of
from .system import System

__all__ = ["SCENARIOS", "Scenario", "ScenarioRun", "run_demo", "run_scenario"]


@dataclass(frozen=True)
class Scenario:
    """One demo scenario: a task, its script, and what it must show."""

    key: str
    title: str
    text: str
    script: str
    expect_states: tuple[str, ...]
    expect_status: str
    expect_in_summary: str = ""


SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "1",
        "a clean accept",
        "count the python files under src",
        "1_success.toml",
        ("accept",),
        "accept",
    ),
    Scenario(
        "2",
        "an environmental failure corrected by change_path",
        "report the total of this year's sales figures",
        "2_change_path.toml",
        ("change_path", "accept"),
        "accept",
    ),
    Scenario(
        "3",
        "a logical failure corrected by break_symmetry",
        "how many TODO items are in notes/todo.txt?",
        "3_break_symmetry.toml",
        ("break_symmetry", "accept"),
        "accept",
    ),
    Scenario(
        "4",
        "a Law 1 action denied",
        "delete the old log archive/old.log",
        "4_law1_denied.toml",
        ("change_path", "change_approach", "break_symmetry", "abandon"),
        "abandon",
        "[LAW1] The only way found",
    ),
    Scenario(
        "5",
        "scenario 2 again, now with memory",
        "report the total of this year's sales figures",
        "5_remembered.toml",
        ("accept",),
        "accept",
    ),
)


@dataclass
class ScenarioRun:
    """What one scenario did, read back from the event log."""

    scenario: Scenario
    task_id: str
    result: FinalResult
    states: list[str] = field(default_factory=list)
    calibration: list[str] = field(default_factory=list)
    llm_calls: int = 0
    gateway_calls: int = 0
    final_results: int = 0

    @property
    def ok(self) -> bool:
        """Whether the run showed what the scenario promises."""
        s = self.scenario
        return (
            tuple(self.states) == s.expect_states
            and self.result.status == s.expect_status
            and s.expect_in_summary in self.result.summary
            and self.final_results == 1
            and self.llm_calls == self.gateway_calls
        )


def _data_dir() -> Path:
    return Path(str(resources.files("artoo") / "demo_data"))


def run_scenario(
    scenario: Scenario, store: Path, workspace: Path, *, timeout: float = 60.0
) -> ScenarioRun:
    """Run one scenario on ``store`` and read what happened back from its log."""
    script = _data_dir() / "scenarios" / scenario.script
    # scenario 4 shows a Law 1 denial with no operator: its reading names the file it
    # deletes and the request spells it out, which the request's own consent (on by
    # default) would approve
    config = Config(
        durability="batch",
        max_parallel=2,
        confirmation_timeout_s=5.0,
        request_consent=False,
    )
    with System.open(store, model=f"scripted:{script}", workspace=workspace, config=config) as s:
        handle = s.submit(scenario.text)
        result = handle.result(timeout)
        s.flush(10.0)
    run = ScenarioRun(scenario, handle.task_id, result)
    run.gateway_calls = handle.usage.model_calls if handle.usage is not None else -1
    with EventLog.open(store / "events", durability="none") as log:
        for env in log.read_task(handle.task_id):
            body = env.body
            if isinstance(body, GGSDecision):
                run.states.append(body.directive)
            elif isinstance(body, LLMCall):
                run.llm_calls += 1
            elif isinstance(body, FinalResult):
                run.final_results += 1
            elif isinstance(body, DispatchManifest):
                lines = [f"SHOULD PREFER: {x}" for x in body.should_prefer]
                lines += [f"MUST NOT: {x}" for x in body.must_not]
                run.calibration.append(" | ".join(lines) if lines else "(no memory lines)")
    return run


def run_demo(
    store: Path | None = None, console: Console | None = None, *, clean: bool = False
) -> int:
    """Run every scenario; print their macro-states; 0 when all showed what they promise.

    The workspace (and the store, unless ``store`` names one) lives in a fresh temporary
    directory. It is kept, as the evidence to inspect (``artoo memory <store>``), unless
    ``clean``; a ``store`` you name is always kept.
    """
    console = console or Console()
    base = Path(tempfile.mkdtemp(prefix="artoo-demo-"))
    store_path = store or base / "store"
    try:
        return _run_all(store_path, base / "workspace", console)
    finally:
        if clean:
            shutil.rmtree(base, ignore_errors=True)
            console.print(f"removed {base}", soft_wrap=True)
        else:
            console.print(
                f"kept {base}: inspect the log with `artoo memory {store_path}`; "
                f"`artoo demo --clean` removes it at the end",
                soft_wrap=True,
            )


def _run_all(store: Path, workspace: Path, console: Console) -> int:
    shutil.copytree(_data_dir() / "workspace", workspace)
    console.print(
        f"[bold]artoo demo[/] — store {store}, workspace {workspace} (scripted model)",
        soft_wrap=True,
    )
    runs = []
    for scenario in SCENARIOS:
        run = run_scenario(scenario, store, workspace)
        runs.append(run)
        mark = "[green]as expected[/]" if run.ok else "[red]UNEXPECTED[/]"
        console.print(f"\n[bold]{scenario.key}. {scenario.title}[/]  ({mark})")
        console.print(f"   task:         {scenario.text}")
        console.print(f"   macro-states: {' → '.join(run.states) or '—'}")
        summary = shorten(summary_of(run.result.status, run.result.summary), 200)
        console.print(f"   final:        {run.result.status} — {summary}")
        for i, lines in enumerate(run.calibration):
            console.print(f"   plan round {i}: {lines}")
        console.print(
            f"   log:          {run.llm_calls} LLMCall records for {run.gateway_calls} model "
            f"calls; {run.final_results} FinalResult"
        )
    survived = (workspace / "archive" / "old.log").exists()
    console.print(f"archive/old.log still exists after scenario 4: {survived}")
    all_ok = all(r.ok for r in runs) and survived
    console.print(
        "[green]all scenarios as expected[/]" if all_ok else "[red]a scenario deviated[/]"
    )
    return 0 if all_ok else 1
