"""The live view of ``artoo run``, recorded on a scripted task: the plan, each command,
each verdict and each GGS decision, in order."""

from __future__ import annotations

import io
import threading
from pathlib import Path

from rich.console import Console

import artoo
from artoo._live import LiveView, shorten, summary_of
from artoo.schemas import Envelope, FinalResult

from .helpers import CONFIG, DATA


def test_the_live_view_shows_the_plan_each_command_and_each_decision(workspace: Path) -> None:
    console = Console(record=True, file=io.StringIO(), width=120)
    view = LiveView(console, spinner=False)
    script = DATA / "scenarios" / "2_change_path.toml"
    with artoo.System.open(
        workspace.parent / "store", model=f"scripted:{script}", config=CONFIG, workspace=workspace
    ) as system:
        shown = threading.Event()

        def show(env: Envelope) -> None:
            view(env)
            if isinstance(env.body, FinalResult):
                shown.set()  # every earlier envelope has been shown

        system.subscribe(show)
        text = "report the total of this year's sales figures"  # the scenario's own
        result = system.submit(text, timeout=60).result(60)
        assert shown.wait(10)
    text = console.export_text()
    assert result.status == "accept"
    lines = text.splitlines()

    def at(fragment: str) -> int:
        return next(i for i, line in enumerate(lines) if fragment in line)

    order = [
        at("task: Report the total of the sales figures"),
        at("plan (round 0):"),
        at("1. report the total of this year's sales figures"),  # the request itself
        at("read_file(path='data/sales_2024.csv')"),
        at("read_file failed: no such file"),
        at("✗ t1"),
        at("GGS round 0: change_path"),
        at("plan (round 1):"),
        at("must not: data/sales_2024.csv"),
        at("1. Add up the amount column of data/sales.csv"),
        at("$ awk -F, 'NR > 1 { s += $2 } END { print s }' data/sales.csv"),
        at("second derivation of 4250 asked"),
        at("$ python3 -c"),
        at("✓ t1"),
        at("GGS round 1: accept"),
    ]
    assert order == sorted(order), text


def test_a_shell_command_is_shown_as_typed() -> None:
    from artoo._live import describe
    from artoo.schemas import LLMCall

    call = LLMCall(
        call_id="c",
        role="executor",
        tier="tool",
        model="m",
        tool_calls=[{"name": "shell", "arguments": {"command": "wc -l notes/todo.txt"}}],
    )
    (line,) = describe(Envelope(1, 0.0, "t", "executor", None, None, call))
    assert line.plain == "  $ wc -l notes/todo.txt"


def test_an_ask_to_show_a_value_is_told_apart_from_a_second_derivation() -> None:
    from artoo._live import describe
    from artoo.schemas import CorrectionSignal

    def line(**kw: object) -> str:
        signal = CorrectionSignal(subtask_id="s", corroborate="18", **kw)  # type: ignore[arg-type]
        (text,) = describe(Envelope(1, 0.0, "t", "agent_validator", None, None, signal))
        return text.plain

    assert line(unbacked=True) == "  18 asked to be computed with a tool"
    assert line() == "  second derivation of 18 asked"


def test_summaries_are_cut_at_a_word_and_say_their_status_once() -> None:
    assert shorten("the quick brown fox jumps over", 18) == "the quick brown…"
    assert summary_of("accept", "accept: every criterion passed") == "every criterion passed"
    assert summary_of("abandon", "[LAW1] denied") == "[LAW1] denied"


def test_demo_summaries_say_their_status_once_and_end_at_a_word(tmp_path: Path) -> None:
    from artoo.demo import run_demo

    console = Console(record=True, file=io.StringIO(), width=400)
    assert run_demo(tmp_path / "store", console) == 0
    finals = [line for line in console.export_text().splitlines() if "final:" in line]
    assert len(finals) == 5
    for line in finals:
        status, _, summary = line.split("final:", 1)[1].strip().partition(" — ")
        assert not summary.startswith(f"{status}:"), line  # no "accept — accept: …"
        assert len(summary) <= 200
        if summary.endswith("…"):
            assert summary[-2] != " " and summary[:-1] == summary[:-1].rstrip()
