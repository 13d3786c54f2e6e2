"""artoo against a plain tool loop on a real model (issue 9). Not part of CI: it needs a model.

Each task of the task file (default ``bench/real_model_tasks.json``, 10 tasks) runs twice
on the same model, each run on a fresh copy of ``artoo/demo_data/workspace``:

1. **artoo**: ``System.run`` on a fresh store (no memory carried between tasks), with
   ``--deadline`` seconds (default 240).
2. **baseline**: a plain single-agent tool loop, ReAct style — one model, the Executor's
   tools (the same ToolRegistry, the same sandbox, the same Law 1 default: deny), the same
   step cap (``Config.max_turns`` model turns), the same deadline; its final text answer is
   its output.

Success is decided by the bench, never by artoo: ``{"number": N}`` — the first whole number
the output states is N; ``{"contains": "x"}`` — the output contains x (case-sensitive);
``{"file": "p", "text": "t"}`` — the workspace file p, stripped, is t. Printed per task and
in total: success, model calls, tokens (in + out), wall time, and artoo's macro-state path
(the GGS decisions in order).

Usage::

    export OPENAI_API_BASE=http://127.0.0.1:18080/v1 OPENAI_API_KEY=x
    export LITELLM_LOCAL_MODEL_COST_MAP=True
    python bench/real_model.py --model openai/qwen2.5-coder-1.5b [--api-base URL]
        [--tasks FILE] [--only 1,3] [--deadline 240] [--keep DIR] [--json]

With ``--json`` the last line printed is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import artoo
from artoo.actors.llm import LLMError, LLMRequest, assistant_message, resolve_backend, tool_message
from artoo.actors.tools import ToolRegistry
from artoo.eventstore import EventLog
from artoo.schemas import Config, GGSDecision
from artoo.system import _sandbox_for

HERE = Path(__file__).resolve().parent
WORKSPACE = HERE.parent / "artoo" / "demo_data" / "workspace"

BASELINE_PROMPT = (
    "You are a helpful assistant with tools over a project directory (paths are relative "
    "to it). Use the tools to answer the user's request, one call at a time. When you have "
    "the answer, reply in plain text without a tool call."
)


def succeeded(expect: dict[str, Any], output: str, workspace: Path) -> bool:
    """The bench's own decision (pure but for reading the workspace)."""
    if "number" in expect:
        m = re.search(r"(?<![\w./-])\d+(?![\w/]|\.\d)", output)
        return m is not None and int(m.group()) == int(expect["number"])
    if "contains" in expect:
        return str(expect["contains"]) in output
    path = workspace / str(expect["file"])
    return path.is_file() and path.read_text(errors="replace").strip() == str(expect["text"])


def run_artoo(
    text: str, model: str, options: dict[str, Any], deadline: float, root: Path
) -> dict[str, Any]:
    ws, store = root / "ws", root / "store"
    shutil.copytree(WORKSPACE, ws)
    started = time.monotonic()
    with artoo.System.open(store, model=model, workspace=ws, model_options=options) as system:
        result = system.run(text, timeout=deadline)
    wall = time.monotonic() - started
    with EventLog.open(store / "events", durability="none") as log:
        path = [e.body.directive for e in log.read() if isinstance(e.body, GGSDecision)]
    return {
        "output": result.output,
        "status": result.status,
        "reason": result.reason,
        "calls": result.cost.model_calls,
        "tokens": result.cost.tokens_in + result.cost.tokens_out,
        "wall_s": wall,
        "path": path,
        "ws": ws,
    }


def run_baseline(
    text: str, model: str, options: dict[str, Any], deadline: float, root: Path
) -> dict[str, Any]:
    ws = root / "ws-baseline"
    shutil.copytree(WORKSPACE, ws)
    config = Config()
    limits = {"timeout": config.role_timeout_s, "max_tokens": config.max_output_tokens}
    backend = resolve_backend(model, **limits, **options)
    hidden = root / "baseline-store"  # what the sandbox hides, as a System's store
    hidden.mkdir(exist_ok=True)
    registry = ToolRegistry(ws, root / "spill", sandbox=_sandbox_for(config, hidden))
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": BASELINE_PROMPT},
        {"role": "user", "content": text},
    ]
    calls = tokens = 0
    output, stop = "", "step_cap"
    started = time.monotonic()
    for _ in range(config.max_turns):
        if time.monotonic() - started > deadline:
            stop = "deadline"
            break
        specs = registry.specs()
        request = LLMRequest(role="baseline", tier="tool", messages=messages, tools=specs)
        try:
            response = backend.complete(request)
        except LLMError as exc:
            stop, output = "model_error", f"model error: {exc}"
            break
        calls += 1
        tokens += sum(response.usage.get(k, 0) for k in ("prompt_tokens", "completion_tokens"))
        if not response.tool_calls:
            output, stop = response.content or "", "answer"
            break
        messages.append(assistant_message(response))
        for tc in response.tool_calls:
            outcome = registry.call(tc.name, dict(tc.arguments))
            messages.append(tool_message(tc.id, outcome.content))
    return {
        "output": output,
        "status": stop,
        "calls": calls,
        "tokens": tokens,
        "wall_s": time.monotonic() - started,
        "ws": ws,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--api-base", default=None)
    parser.add_argument("--tasks", type=Path, default=HERE / "real_model_tasks.json")
    parser.add_argument("--only", default="", help="1-based task numbers, comma-separated")
    parser.add_argument("--deadline", type=float, default=240.0)
    parser.add_argument("--keep", type=Path, default=None, help="keep stores here (task-N/)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    options: dict[str, Any] = {"api_base": args.api_base} if args.api_base else {}
    tasks = json.loads(args.tasks.read_text())
    chosen = {int(n) for n in args.only.split(",") if n.strip()} or set(range(1, len(tasks) + 1))
    rows = []
    for number, task in enumerate(tasks, start=1):
        if number not in chosen:
            continue
        with tempfile.TemporaryDirectory(prefix="artoo-real-") as tmp:
            root = Path(tmp) if args.keep is None else args.keep / f"task-{number}"
            root.mkdir(parents=True, exist_ok=True)
            a = run_artoo(task["text"], args.model, options, args.deadline, root)
            b = run_baseline(task["text"], args.model, options, args.deadline, root)
            a_ok = succeeded(task["expect"], a.pop("output"), a.pop("ws"))
            b_out = b.pop("output")
            b_ok = succeeded(task["expect"], b_out, b.pop("ws"))
        row = {"task": number, "text": task["text"], "artoo": {"ok": a_ok, **a}}
        row["baseline"] = {"ok": b_ok, **b}
        rows.append(row)
        print(
            f"{number:2} {task['text'][:58]:58} | artoo {'OK ' if a_ok else 'no '}"
            f"{a['calls']:2} calls {a['tokens']:6} tok {a['wall_s']:6.1f} s "
            f"{'>'.join(a['path']) or '-'} ({a['reason']}) | baseline {'OK ' if b_ok else 'no '}"
            f"{b['calls']:2} calls {b['tokens']:6} tok {b['wall_s']:6.1f} s ({b['status']})",
            flush=True,
        )
    total = {
        side: {
            "ok": sum(r[side]["ok"] for r in rows),
            "calls": sum(r[side]["calls"] for r in rows),
            "tokens": sum(r[side]["tokens"] for r in rows),
            "wall_s": round(sum(r[side]["wall_s"] for r in rows), 1),
        }
        for side in ("artoo", "baseline")
    }
    for side, t in total.items():
        print(
            f"{side:8} {t['ok']}/{len(rows)} tasks, {t['calls']} model calls, "
            f"{t['tokens']} tokens, {t['wall_s']} s"
        )
    if args.json:
        print(json.dumps({"model": args.model, "tasks": rows, "total": total}))


if __name__ == "__main__":
    main()
