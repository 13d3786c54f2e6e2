"""The memory effect on a real model (issue 21). Not part of CI: it needs a model.

Families of related requests — 3 families × 4 variants: paraphrases, and the same task on
other files — run in order on **one** store, three passes over the whole list (memory
carries across requests and passes). Against them, each request once on a **fresh** store
(no memory). Every run gets a fresh copy of ``artoo/demo_data/workspace``; the expected
answer is computed by the bench from that workspace (``wc -l``'s count of newlines,
whitespace-separated words, ``*.py`` files), never taken from artoo.

Printed per pass (and for the fresh runs): model calls, wall time, replans, precision
(answers right / requests), and each request's line (calls, replans, right or wrong, the
GGS's path, how its plan started: reused / from a recalled episode / fresh). A request whose
answer was wrong while its first plan came from memory is listed as "memory misled".

Usage::

    export OPENAI_API_KEY=x LITELLM_LOCAL_MODEL_COST_MAP=True
    python bench/memory_effect.py --model openai/qwen2.5-coder-1.5b \\
        --api-base http://127.0.0.1:18080/v1 [--embedder minilm] [--passes 3] \\
        [--deadline 900] [--out FILE.jsonl] [--keep DIR]

Each finished request is appended to ``--out`` as one JSON line as soon as it ends, so a
run cut short still leaves its figures; ``--summarize FILE.jsonl`` prints the table of a
(partial) run. ``--keep DIR`` keeps the stores (``store``, ``fresh<i>``) and workspaces
there, for ``artoo replay`` and ``artoo memory`` afterwards.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import tempfile
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
WORKSPACE = HERE.parent / "artoo" / "demo_data" / "workspace"

# (family, request, kind, path): kind says how the answer is computed from the workspace
FAMILIES: list[tuple[str, str, str, str]] = [
    ("lines", "how many lines are in notes/todo.txt?", "lines", "notes/todo.txt"),
    ("lines", "count the lines of notes/todo.txt", "lines", "notes/todo.txt"),
    ("lines", "how many lines does data/sales.csv have?", "lines", "data/sales.csv"),
    ("lines", "what is the line count of src/app.py?", "lines", "src/app.py"),
    ("words", "how many words are in README.md?", "words", "README.md"),
    ("words", "count the words in README.md", "words", "README.md"),
    ("words", "how many words does notes/todo.txt contain?", "words", "notes/todo.txt"),
    ("words", "what is the word count of src/util.py?", "words", "src/util.py"),
    ("pyfiles", "count the python files under src", "pyfiles", "src"),
    ("pyfiles", "how many .py files are in src?", "pyfiles", "src"),
    ("pyfiles", "how many python files does the src directory hold?", "pyfiles", "src"),
    ("pyfiles", "how many python files are under src/models?", "pyfiles", "src/models"),
]


def expected(kind: str, path: str, workspace: Path) -> int:
    """The right answer, computed from the workspace (pure but for reading it)."""
    target = workspace / path
    if kind == "lines":
        return target.read_bytes().count(b"\n")
    if kind == "words":
        return len(target.read_text(errors="replace").split())
    if kind == "pyfiles":
        return sum(1 for p in target.rglob("*.py") if p.is_file())
    raise ValueError(f"unknown kind {kind!r}")


_NUMBER = re.compile(r"(?<![\w./-])\d+(?![\w/]|\.\d)")
_NOT_STATED = re.compile(
    r'"[^"\n]*[^"\d\s][^"\n]*"'  # a quoted text that is more than a number: a command, a request
    r"|(?<![\w-])--?[a-z][\w-]*[ =]\d+"  # an option's value: -maxdepth 0, --lines=5
    r"|\bexit (?:code|status)(?: of| was| is)? \d+",  # how a command ended
    re.IGNORECASE,
)


def right(output: str, answer: int) -> bool:
    """The first whole number the output states is the answer — a number inside a quoted
    command or request, an option's value or an exit code is no number it states (a
    small model quoted ``find src/**/*.py -maxdepth 0 … | wc -l`` before its count)."""
    m = _NUMBER.search(_NOT_STATED.sub(" ", output))
    return m is not None and int(m.group()) == answer


@dataclass(frozen=True)
class Run:
    """One request's run: which pass (0 = fresh store), and what it cost and gave."""

    run: str  # "pass1" | "pass2" | "pass3" | "fresh"
    family: str
    text: str
    right: bool
    calls: int
    replans: int
    wall_s: float
    status: str
    path: list[str]
    plan_from: str  # "reused" | "episode" | "fresh"
    output: str = ""  # the FinalResult's output: what ``right`` read


def summarize(runs: Iterable[Run]) -> dict[str, dict[str, Any]]:
    """Per run label: requests, model calls, wall time, replans, precision, and the
    requests memory misled (wrong answer, first plan from memory)."""
    out: dict[str, dict[str, Any]] = {}
    for r in runs:
        s = out.setdefault(
            r.run,
            {"requests": 0, "calls": 0, "wall_s": 0.0, "replans": 0, "right": 0, "misled": []},
        )
        s["requests"] += 1
        s["calls"] += r.calls
        s["wall_s"] += r.wall_s
        s["replans"] += r.replans
        s["right"] += r.right
        if not r.right and r.plan_from != "fresh":
            s["misled"].append(r.text)
    for s in out.values():
        s["precision"] = s["right"] / s["requests"] if s["requests"] else 0.0
        s["wall_s"] = round(s["wall_s"], 1)
    return out


def _plan_from(envelopes: list[Any]) -> str:
    from artoo.schemas import DispatchManifest, MemoryRecall

    for env in envelopes:
        if isinstance(env.body, DispatchManifest) and env.body.round == 0:
            if env.body.rationale.startswith("the plan of the accepted episode"):
                return "reused"
            break
    for env in envelopes:
        if isinstance(env.body, MemoryRecall) and env.body.round == 0 and env.body.episodes:
            return "episode"
    return "fresh"


def run_one(
    system: Any, store: Path, label: str, item: tuple[str, str, str, str], ws: Path, deadline: float
) -> Run:
    """Run one request on an open System and read its figures back from the log."""
    from artoo.eventstore import EventLog  # noqa: F401 - the System holds the log open
    from artoo.schemas import GGSDecision

    family, text, kind, path = item
    started = time.monotonic()
    handle = system.submit(text)
    try:  # the task's own deadline (Config.task_timeout_s) ends it first, abandon
        result = handle.result(deadline + 300.0)
    except TimeoutError:
        handle.cancel("bench: no result in time")
        result = handle.result(120.0)
    wall = time.monotonic() - started
    envelopes = list(system.log.read_task(handle.task_id))
    return Run(
        run=label,
        family=family,
        text=text,
        right=right(result.output or "", expected(kind, path, ws)),
        calls=result.cost.model_calls,
        replans=result.replans,
        wall_s=round(wall, 2),
        status=result.status,
        path=[e.body.directive for e in envelopes if isinstance(e.body, GGSDecision)],
        plan_from=_plan_from(envelopes),
        output=result.output or "",
    )


def _print(run: Run) -> None:
    print(
        f"{run.run:6} {run.text[:52]:52} {'OK ' if run.right else 'no '}{run.calls:3} calls "
        f"{run.replans} replans {run.wall_s:6.1f} s {run.plan_from:7} {'>'.join(run.path)}",
        flush=True,
    )


def _table(summary: dict[str, dict[str, Any]]) -> None:
    print(f"{'run':6} {'requests':>8} {'calls':>6} {'wall s':>8} {'replans':>7} {'precision':>9}")
    for label, s in summary.items():
        print(
            f"{label:6} {s['requests']:8d} {s['calls']:6d} {s['wall_s']:8.1f} "
            f"{s['replans']:7d} {s['precision']:9.0%}"
        )
        for text in s["misled"]:
            print(f"       memory misled: {text}")


def main(argv: list[str] | None = None) -> int:
    """Run the bench (or summarize a run's JSON lines)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default=None)
    parser.add_argument("--api-base", default=None)
    parser.add_argument("--embedder", choices=["hash", "minilm"], default="minilm")
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--deadline", type=float, default=900.0, help="per task, seconds")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--no-fresh", action="store_true", help="skip the fresh-store runs")
    parser.add_argument("--summarize", type=Path, default=None)
    parser.add_argument(
        "--caution",
        choices=["approve", "deny"],
        default="approve",
        help="the operator's answer to memory's intent-level Caution (a request whose "
        "family had mixed outcomes is asked about once): approve (default: a person at "
        "the keyboard says yes) or deny (no operator: every such task is abandoned); Law 1 "
        "questions are denied, as with no operator attached",
    )
    parser.add_argument(
        "--keep", type=Path, default=None, help="keep the stores and workspaces here (a new dir)"
    )
    args = parser.parse_args(argv)
    if args.summarize is not None:
        lines = args.summarize.read_text().splitlines()
        _table(summarize(Run(**json.loads(line)) for line in lines if line.strip()))
        return 0
    if args.model is None:
        parser.error("--model is required (or --summarize FILE)")

    import artoo
    from artoo.schemas import Config, MemoryConfig

    options: dict[str, Any] = {"api_base": args.api_base} if args.api_base else {}
    config = Config(memory=MemoryConfig(embedder=args.embedder), task_timeout_s=args.deadline)
    runs: list[Run] = []

    def keep(run: Run) -> None:
        runs.append(run)
        _print(run)
        if args.out is not None:
            with args.out.open("a") as f:
                f.write(json.dumps(asdict(run)) + "\n")

    if args.keep is not None and args.keep.exists() and any(args.keep.iterdir()):
        parser.error(f"--keep {args.keep}: not empty (give a new directory)")
    with tempfile.TemporaryDirectory(prefix="artoo-memory-effect-") as tmp:
        root = Path(tmp) if args.keep is None else args.keep
        root.mkdir(parents=True, exist_ok=True)
        store = root / "store"
        approve = args.caution == "approve"

        def operator(request: Any) -> bool | None:
            """Memory's Caution answered as chosen; anything else denied, as with no
            operator attached."""
            return approve if request.gate == "caution" else False

        def open_system(where: Path, ws: Path) -> Any:
            """A System over the store ``where`` and a fresh copy of the workspace ``ws``."""
            shutil.copytree(WORKSPACE, ws)
            return artoo.System.open(
                where,
                model=args.model,
                workspace=ws,
                model_options=options,
                config=config,
                operator=operator,
            )

        for n in range(1, args.passes + 1):
            ws = root / f"ws-pass{n}"
            with open_system(store, ws) as system:
                for item in FAMILIES:
                    keep(run_one(system, store, f"pass{n}", item, ws, args.deadline))
        if not args.no_fresh:
            for i, item in enumerate(FAMILIES):
                ws, fresh = root / f"ws-fresh{i}", root / f"fresh{i}"
                with open_system(fresh, ws) as system:
                    keep(run_one(system, fresh, "fresh", item, ws, args.deadline))
    summary = summarize(runs)
    _table(summary)
    first, last = summary.get("pass1"), summary.get(f"pass{args.passes}")
    if first and last and first["calls"]:
        print(f"last pass / first pass model calls: {last['calls'] / first['calls']:.2f}")
    if "fresh" in summary and last:
        print(f"fresh-store calls {summary['fresh']['calls']}, last pass {last['calls']}")
    print(
        json.dumps(
            {
                "summary": summary,
                "median_wall_s": statistics.median([r.wall_s for r in runs]) if runs else 0.0,
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
