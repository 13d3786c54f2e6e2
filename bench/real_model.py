"""artoo against a plain tool loop on a real model (issues 9, 23, 40). Not in CI: needs a model.

The default task file, ``bench/real_projects_tasks.json`` (issue 40: 77 tasks in 12
families), runs each task on a fresh copy of a **real project's** workspace — the unpacked
sdist of tabulate 0.9.0, more-itertools 10.5.0, semver 3.0.2 or sqlparse 0.5.1 in
``bench/workspaces/<name>/`` (origin and licences: ``bench/workspaces/README.md``), the task's
``setup`` command (if any) run in it first. The split is **by workspace**
(``bench/workspaces/workspaces.json``): sqlparse is the holdout, never tuned on. The old
files stay selectable with ``--tasks``: ``bench/real_model_tasks.json`` (issue 23: 42 tasks in
7 families, half "tune", half "holdout" per family) and ``bench/real_model_tasks_issue9.json``
run on a fresh copy of ``artoo/demo_data/workspace`` with ``bench/workspace_extra/`` laid
over it (more files: CSV tables, code, a log; ``artoo/demo_data/workspace`` itself is left
alone). Each task runs on the same model:

1. **artoo**: ``System.run`` on a fresh store (no memory carried between tasks), with
   ``--deadline`` seconds (default 240).
2. **baseline**: a plain single-agent tool loop, ReAct style — one model, the Executor's
   tools (the same ToolRegistry, the same sandbox, the same Law 1 default: deny), the same
   step cap (``Config.max_turns`` model turns), the same deadline; its final text answer is
   its output.

Whether an answer is **right** is decided by the bench, never by artoo (:func:`judge`):

- ``{"number": N}``: the first number the output states that does not echo a number of
  the request is N (decimals and thousands separators read; dates, times, names and paths
  are no numbers; ``tol`` allowed);
- ``{"contains": "x" | ["x", …], "icase": bool, "not_contains": [...]}``: the output states
  every x and none of the others;
- ``{"file": "p", "text": "t"}``: the workspace file p, stripped, is t; or with
  ``file_contains`` / ``file_not_contains`` (lists) and ``file_matches`` /
  ``file_not_matches`` (regexes) instead of ``text``;
- ``{"refuse": true, "file_exists": "p", "claim": "regex"}``: a task Law 1 denies (default
  deny): right when the file is still there and no sentence of the output claims it done
  (a sentence that says "not", "denied", "could not"… is no claim). For artoo an ``accept``
  or ``success`` of such a task is wrong whatever it says (a denial is not a success).
  With ``"consented": true`` the request itself names the file and asks for the deletion
  (artoo's ``Config.request_consent`` may carry it out with no operator): a run that
  deleted it is right too when its output says so — and, for artoo, it is accepted; such a
  run counts as completed only when accepted, a kept file as a refusal does.

For the real projects (issue 40), each by the file's own format, and combinable (every key
of an expectation is checked; ``{"all": [...]}`` holds several of one kind):

- ``{"version": "2.1"}``: the first version the output states (not one of the request) is
  2.1 as a version (2.1.0 is, 2.1.3 is not; ``pypy-3.8`` holds no version);
- ``{"set": [...], "of": glob | "among": [...], "complete": true}``: the output names every
  item and, when complete, no other item of the universe — the workspace files matching
  ``of`` (named by path, by path less ``src/``, by dotted module, or by file name where
  unique) or the strings of ``among`` (``aliases`` allowed); order free; a sentence or
  parenthesis that says "not", "except", "without"… names nothing;
- ``{"toml" | "yaml" | "ini" | "json": path, "key": "a.b" (INI: ``"section"`` too),
  "equals" | "has" | "lacks" | "matches" | "absent"}``: the file parses after the run and
  holds that value (YAML's unquoted 3.10 is the float 3.1: not "3.10");
- ``{"file": p, "number" | "version" | "set": …}``: a file's content judged as an output;
- ``{"tests_pass": [node ids], "no_new_failures": true | [paths]}``: the bench's own Python
  runs pytest in the workspace after the run (plus the workspace's ``pytest_args``): the
  named tests (or every test under a class or file id) pass, and no test of the paths
  fails that passes in an untouched copy;
- ``{"unchanged": true}`` (every question: a question must not write) and
  ``{"only_changed": [glob, ...]}`` (every change: nothing outside the request's scope): the
  files added, removed or changed against an untouched copy (caches aside).

**Accepted**: for artoo, a FinalResult with status ``accept`` ("strict") or ``accept`` or
``success``; for the baseline, a final text answer (stop ``answer``). Figures, per side,
over all runs, over the first run of each task, per split (tune / holdout) and, for the
real projects, per workspace:

- **precision** = right among accepted (artoo: strict and accept+success);
- **completion** = right *and* accepted among all runs (a refusal task counts when right;
  the baseline's every run is final: right among all, as issue 23 defines it);
- model calls, tokens and wall seconds per completed (right and accepted) answer;
- the **spread** (min / median / max over the repeats) of those figures on the repeated
  subset, and each repeated task's outcome per repeat.

Also kept per run: FinalResult status, reason, ``law1_denied``, artoo's honest-verdict field
if FinalResult has one (read with ``getattr``: ``established``, ``established_by``, …), the
GGS path (macro-states in order), the Perceiver's intent, and the tool calls.

Usage (the model served by llama.cpp's ``llama-server`` at 127.0.0.1:18080)::

    export OPENAI_API_BASE=http://127.0.0.1:18080/v1 OPENAI_API_KEY=x
    export LITELLM_LOCAL_MODEL_COST_MAP=True
    nohup python bench/real_model.py --model openai/qwen2.5-coder-1.5b --deadline 200 \\
        --repeat-subset 10 --repeats 3 --out runs.jsonl --keep keep/ --json \\
        > bench.log 2>&1 &
    # killed? the same command with --resume runs.jsonl does only what is missing:
    python bench/real_model.py … --out runs.jsonl --resume runs.jsonl
    # only the figures, from a rows file (no model):
    python bench/real_model.py --summarise runs.jsonl --json

Other options: ``--side artoo|baseline|both``, ``--split tune|holdout``, ``--workspace NAME``
(only the tasks on one real project), ``--only ids`` (task ids or 1-based numbers,
comma-separated), ``--tasks FILE`` (default ``bench/real_projects_tasks.json``; the old
``bench/real_model_tasks.json`` and ``bench/real_model_tasks_issue9.json`` too),
``--workspace-extra DIR`` (for the old files' tasks only; ``''``: none; the issue-9 tasks
need none), ``--operator deny|approve`` (Law 1 confirmations: by default no operator, every
one denied — artoo's request consent aside — as issue 23 ran; ``approve``: an operator who
says yes, on both sides; see bench/README.md for which tasks need one). The figures are
given per workspace too when the rows have real projects.
With ``--json`` the last line printed is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
WORKSPACE = HERE.parent / "artoo" / "demo_data" / "workspace"
EXTRA = HERE / "workspace_extra"
WORKSPACES = HERE / "workspaces"
"""Workspaces made from real projects' sdists, one folder each (``workspaces.json`` says
which split each belongs to and how its tests run; ``README.md`` their origin and licence)."""
DEFAULT_TASKS = HERE / "real_projects_tasks.json"
CACHES = frozenset({"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis"})
"""Folders that running code leaves behind: no change of the workspace."""
SIDES = ("artoo", "baseline")
SPLITS = ("tune", "holdout")
ESTABLISHED_FIELDS = ("established", "established_by", "establishment", "proof", "verdict")
"""FinalResult fields that may hold artoo's honest verdict (how the answer was established)."""

BASELINE_PROMPT = (
    "You are a helpful assistant with tools over a project directory (paths are relative "
    "to it). Use the tools to answer the user's request, one call at a time. When you have "
    "the answer, reply in plain text without a tool call."
)


# --------------------------------------------------------------------------- tasks


@dataclass(frozen=True)
class Task:
    """One bench task: the request, how the bench judges it, its family and split."""

    id: str
    text: str
    expect: dict[str, Any]
    family: str = "misc"
    split: str = "tune"
    oracle: str = ""
    """A shell command that computes (or, for a file task, does) the right answer: the
    offline tests run it over the workspace to check the task's ``expect``."""
    catches: tuple[str, ...] = ()
    workspace: str = ""
    """The real project's workspace (a folder of ``bench/workspaces``) the task runs on;
    empty: the demo workspace with ``--workspace-extra`` laid over it."""
    setup: str = ""
    """A shell command run in the fresh workspace before the run (and before the oracle):
    e.g. it adds the failing test a "make this test pass" request names."""

    @property
    def refuse(self) -> bool:
        """The right outcome is that the task is not done (Law 1 denies it)."""
        return bool(self.expect.get("refuse"))


def load_workspaces() -> dict[str, dict[str, Any]]:
    """The real projects' workspaces: name -> split, version, pytest arguments."""
    manifest = WORKSPACES / "workspaces.json"
    if not manifest.is_file():
        return {}
    found: dict[str, dict[str, Any]] = json.loads(manifest.read_text())
    return found


def _with_pytest_args(expect: dict[str, Any], args: list[str]) -> dict[str, Any]:
    """A ``tests_pass`` expectation (also inside ``all``) with its workspace's pytest args."""
    out = dict(expect)
    if "tests_pass" in out or "no_new_failures" in out:
        out.setdefault("pytest_args", list(args))
    if "all" in out:
        out["all"] = [_with_pytest_args(dict(e), args) for e in out["all"]]
    return out


def load_tasks(
    raw: Sequence[dict[str, Any]], workspaces: dict[str, dict[str, Any]] | None = None
) -> list[Task]:
    """Tasks from the task file's list; tasks without an id are numbered from 1. A task
    that names a real project's workspace takes its split from the workspace (the split is
    by workspace: a task that says otherwise is refused)."""
    known = load_workspaces() if workspaces is None else workspaces
    tasks = []
    for n, item in enumerate(raw, start=1):
        name = str(item.get("workspace", ""))
        split = str(item.get("split", "tune"))
        expect = dict(item["expect"])
        if name:
            if name not in known:
                raise ValueError(f"task {item.get('id', n)}: no workspace {name!r}")
            split = str(known[name]["split"])
            if item.get("split", split) != split:
                raise ValueError(
                    f"task {item.get('id', n)}: split {item['split']!r}, but workspace "
                    f"{name} is {split!r} (the split is by workspace)"
                )
            expect = _with_pytest_args(expect, list(known[name].get("pytest_args", [])))
        tasks.append(
            Task(
                id=str(item.get("id", n)),
                text=str(item["text"]),
                expect=expect,
                family=str(item.get("family", "misc")),
                split=split,
                oracle=str(item.get("oracle", "")),
                catches=tuple(item.get("catches", ())),
                workspace=name,
                setup=str(item.get("setup", "")),
            )
        )
    ids = [t.id for t in tasks]
    if len(set(ids)) != len(ids):
        raise ValueError(f"duplicate task ids in {ids}")
    for t in tasks:
        if t.split not in SPLITS:
            raise ValueError(f"task {t.id}: split {t.split!r} is not one of {SPLITS}")
    return tasks


def select(
    tasks: Sequence[Task], only: str = "", split: str = "", workspace: str = ""
) -> list[Task]:
    """The tasks named by ``only`` (ids or 1-based numbers), in ``split`` and on
    ``workspace`` (each if given)."""
    wanted = {w.strip() for w in only.split(",") if w.strip()}
    chosen = []
    for number, task in enumerate(tasks, start=1):
        if wanted and task.id not in wanted and str(number) not in wanted:
            continue
        if split and task.split != split:
            continue
        if workspace and task.workspace != workspace:
            continue
        chosen.append(task)
    return chosen


def repeat_subset(tasks: Sequence[Task], n: int) -> list[str]:
    """``n`` task ids spread over the families (round robin in file order), both splits."""
    by_family: dict[str, list[Task]] = {}
    for t in tasks:
        by_family.setdefault(t.family, []).append(t)
    queues = list(by_family.values())
    chosen: list[str] = []
    depth = 0
    while len(chosen) < min(n, len(tasks)):
        for queue in queues:
            if depth < len(queue) and len(chosen) < n:
                chosen.append(queue[depth].id)
        depth += 1
    return chosen


def plan_runs(tasks: Sequence[Task], subset: Iterable[str], repeats: int) -> list[tuple[Task, int]]:
    """Every task once (repeat 0), then the subset's tasks for repeats 1 … ``repeats``-1."""
    runs = [(t, 0) for t in tasks]
    again = set(subset)
    for r in range(1, repeats):
        runs += [(t, r) for t in tasks if t.id in again]
    return runs


# --------------------------------------------------------------------------- judging


@dataclass(frozen=True)
class Judgement:
    """The bench's decision on one answer, and why (for the findings)."""

    right: bool
    why: str


_NUMBER = re.compile(r"(?<![\w./:-])(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\w/:-]|\.\d|,\d{3})")
_NEGATION = re.compile(
    r"\b(not|no|never|cannot|can't|couldn't|could not|unable|denied|refused|failed|won't)\b|n't\b",
    re.IGNORECASE,
)


def numbers(text: str) -> list[float]:
    """The numbers a text states, in order (not part of a name, path, date or time)."""
    return [float(m.group().replace(",", "")) for m in _NUMBER.finditer(text)]


def stated_number(output: str, request: str = "") -> float | None:
    """The first number the output states that does not echo a number of the request
    (``Square(3).area() returns 9`` states 9); if it only echoes, the first one."""
    found = numbers(output)
    echoed = set(numbers(request))
    fresh = [n for n in found if n not in echoed]
    first = fresh or found
    return first[0] if first else None


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


def claims(output: str, claim: str) -> bool:
    """Some sentence of the output matches ``claim`` (case-insensitive) without a negation."""
    pattern = re.compile(claim, re.IGNORECASE)
    sentences = re.split(r"(?<=[.!?;])\s+|\n+", output)
    return any(pattern.search(s) and not _NEGATION.search(s) for s in sentences)


def judge_text(expect: dict[str, Any], output: str, request: str = "") -> Judgement:
    """Judge an answer's text against a ``number`` or ``contains`` expectation (pure)."""
    if "number" in expect:
        want = float(expect["number"])
        got = stated_number(output, request)
        if got is None:
            return Judgement(False, "states no number")
        ok = abs(got - want) <= float(expect.get("tol", 1e-6))
        return Judgement(ok, f"first number {got:g}, expected {want:g}")
    icase = bool(expect.get("icase"))
    seen = output.lower() if icase else output

    def norm(s: str) -> str:
        return s.lower() if icase else s

    missing = [w for w in _as_list(expect.get("contains")) if norm(w) not in seen]
    if missing:
        return Judgement(False, f"does not state {missing}")
    extra = [w for w in _as_list(expect.get("not_contains")) if norm(w) in seen]
    if extra:
        return Judgement(False, f"states {extra}, which it must not")
    return Judgement(True, "states the expected value")


def judge_file(expect: dict[str, Any], workspace: Path) -> Judgement:
    """Judge a file task by reading the workspace after the run."""
    path = workspace / str(expect["file"])
    if not path.is_file():
        return Judgement(False, f"no file {expect['file']}")
    content = path.read_text(errors="replace")
    if "text" in expect and content.strip() != str(expect["text"]):
        return Judgement(False, f"{expect['file']} is {content.strip()[:80]!r}")
    missing = [w for w in _as_list(expect.get("file_contains")) if w not in content]
    if missing:
        return Judgement(False, f"{expect['file']} lacks {missing}")
    extra = [w for w in _as_list(expect.get("file_not_contains")) if w in content]
    if extra:
        return Judgement(False, f"{expect['file']} still has {extra}")
    if "file_matches" in expect and not re.search(str(expect["file_matches"]), content):
        return Judgement(False, f"{expect['file']} does not match {expect['file_matches']!r}")
    if "file_not_matches" in expect and re.search(str(expect["file_not_matches"]), content):
        return Judgement(False, f"{expect['file']} matches {expect['file_not_matches']!r}")
    return Judgement(True, f"{expect['file']} as expected")


# ------------------------------------------------- judging real projects (issue 40)

_VERSION = re.compile(r"(?<![\w./+-])v?(\d+(?:\.\d+)+)(?![\w/-]|\.\d|\+\w)")


def versions(text: str) -> list[str]:
    """The version-like tokens a text states, in order (``3.12``, ``v0.5.1``, the ``3.7`` of
    ``3.7+``; not the ``3.8`` of ``pypy-3.8``, ``3.8-dev`` or ``1.2.3+build``, nor parts of
    dates, paths or longer names)."""
    return [m.group(1) for m in _VERSION.finditer(text)]


def same_version(a: str, b: str) -> bool:
    """Equal as versions: ``2.1`` is ``2.1.0``, ``2.1.3`` is not ``2.1``."""

    def key(v: str) -> tuple[int, ...]:
        parts = [int(p) for p in v.lstrip("v").split(".")]
        while len(parts) > 1 and parts[-1] == 0:
            parts.pop()
        return tuple(parts)

    return key(a) == key(b)


def stated_version(output: str, request: str = "") -> str | None:
    """The first version the output states that does not echo a version of the request."""
    found = versions(output)
    echoed = versions(request)
    fresh = [v for v in found if not any(same_version(v, e) for e in echoed)]
    first = fresh or found
    return first[0] if first else None


def _named_pattern(alias: str) -> re.Pattern[str]:
    return re.compile(r"(?<![\w./-])" + re.escape(alias) + r"(?![\w/-]|\.\w)")


def path_aliases(paths: Sequence[str]) -> dict[str, list[str]]:
    """How an answer may name each of some workspace files: its path (less a leading
    ``src/``), its dotted module name (``pkg.sub.mod``; a package by ``pkg.sub``, but a
    top-level package's ``__init__.py`` not by the package's bare name) and its file name
    where that is unique among them."""
    names = [Path(p).name for p in paths]
    out: dict[str, list[str]] = {}
    for p in paths:
        aliases = [p]
        rel = p[4:] if p.startswith("src/") else p
        if rel != p:
            aliases.append(rel)
        if rel.endswith(".py"):
            parts = rel[:-3].split("/")
            if parts[-1] == "__init__":
                parts = parts[:-1]
            if len(parts) > 1 and all(part.isidentifier() for part in parts):
                aliases.append(".".join(parts))
        base = Path(p).name
        if names.count(base) == 1:
            aliases.append(base)
        out[p] = aliases
    return out


def universe(expect: dict[str, Any], root: Path) -> dict[str, list[str]]:
    """The items a set answer chooses from, each with the names it may go by: the
    workspace files matching the glob ``of`` (see :func:`path_aliases`), or the strings of
    ``among`` (with ``aliases``: {item: [other names]})."""
    if "of" in expect:
        found = sorted(
            str(p.relative_to(root))
            for p in root.glob(str(expect["of"]))
            if p.is_file() and not CACHES.intersection(p.relative_to(root).parts)
        )
        return path_aliases(found)
    items = _as_list(expect.get("among")) or _as_list(expect["set"])
    more = dict(expect.get("aliases", {}))
    for item in _as_list(expect["set"]):
        if item not in items:
            items.append(item)
    return {i: [i, *_as_list(more.get(i))] for i in items}


_SET_NEGATION = re.compile(
    _NEGATION.pattern + r"|\b(neither|nor|except|excluding|without|besides)\b", re.IGNORECASE
)


def named(text: str, items: dict[str, list[str]], icase: bool = False) -> set[str]:
    """The items a text names (any of its names, as a whole token; order free), read
    sentence by sentence (and parenthesis by parenthesis): a sentence that says "not",
    "except", "without"… names nothing ("3.13-dev is not tested")."""
    found: set[str] = set()
    for part in re.split(r"(?<=[.!?;])\s+|\n+|[()]", text):
        if _SET_NEGATION.search(part):
            continue
        seen = part.lower() if icase else part
        found |= {
            item
            for item, aliases in items.items()
            if any(_named_pattern(a.lower() if icase else a).search(seen) for a in aliases)
        }
    return found


def judge_set(expect: dict[str, Any], text: str, root: Path) -> Judgement:
    """``{"set": [...], "of": glob | "among": [...], "complete": bool}``: the text names
    every item of the set and, when complete, no other item of the universe."""
    items = universe(expect, root)
    want = set(_as_list(expect["set"]))
    got = named(text, items, bool(expect.get("icase")))
    missing = sorted(want - got)
    if missing:
        return Judgement(False, f"does not name {missing}")
    extra = sorted(got - want)
    if expect.get("complete") and extra:
        return Judgement(False, f"also names {extra}")
    return Judgement(True, f"names all {len(want)}" + (" and no other" if extra == [] else ""))


def judge_answer(expect: dict[str, Any], text: str, root: Path, request: str = "") -> Judgement:
    """Judge a text (the output, or a file's content): ``number``, ``version``, ``set``,
    ``contains`` / ``not_contains``, each that the expectation has."""
    if "version" in expect:
        want = str(expect["version"])
        got = stated_version(text, request)
        if got is None:
            return Judgement(False, "states no version")
        if not same_version(got, want):
            return Judgement(False, f"first version {got}, expected {want}")
    if "set" in expect:
        verdict = judge_set(expect, text, root)
        if not verdict.right:
            return verdict
    if "number" in expect or "contains" in expect or "not_contains" in expect:
        return judge_text(expect, text, request)
    return Judgement(True, "states the expected value")


CONFIG_KINDS = ("toml", "yaml", "ini", "json")


def read_config(kind: str, path: Path) -> Any:
    """A config file parsed by its own format (INI: sections of keys, no interpolation)."""
    text = path.read_text()
    if kind == "toml":
        import tomllib

        return tomllib.loads(text)
    if kind == "yaml":
        import yaml

        return yaml.safe_load(text)
    if kind == "json":
        return json.loads(text)
    import configparser

    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read_string(text)
    return {name: dict(parser[name]) for name in parser.sections()}


_MISSING = object()


def config_value(data: Any, key: str | list[Any]) -> Any:
    """The value at a dotted key (or a list of keys; list items by index)."""
    for part in key.split(".") if isinstance(key, str) else key:
        if isinstance(data, list) and str(part).lstrip("-").isdigit():
            index = int(part)
            if not -len(data) <= index < len(data):
                return _MISSING
            data = data[index]
        elif isinstance(data, dict) and part in data:
            data = data[part]
        else:
            return _MISSING
    return data


def _items_of(value: Any) -> list[str]:
    """A config value's items: a list's, or an INI value's lines and comma-separated parts."""
    if isinstance(value, list):
        return [str(v) for v in value]
    return [p.strip() for p in re.split(r"[\n,]", str(value)) if p.strip()]


def judge_config(expect: dict[str, Any], workspace: Path) -> Judgement:
    """``{"toml" | "yaml" | "ini" | "json": path, "key": "a.b" (ini: with "section"),
    "equals": v | "has": item(s) | "lacks": item(s) | "matches": regex | "absent": true}``:
    the file, read by its own format after the run, holds that value."""
    kind = next(k for k in CONFIG_KINDS if k in expect)
    rel = str(expect[kind])
    path = workspace / rel
    if not path.is_file():
        return Judgement(False, f"no file {rel}")
    try:
        data = read_config(kind, path)
    except Exception as exc:  # a file the edit broke is a wrong edit
        return Judgement(False, f"{rel} no longer parses as {kind}: {exc}"[:200])
    key: Any = expect.get("key", [])
    if kind == "ini":
        section = str(expect["section"])
        key = [section, *([key] if isinstance(key, str) else key)]
    value = config_value(data, key)
    where = f"{rel}: {key}"
    if expect.get("absent"):
        if value is _MISSING:
            return Judgement(True, f"{where} absent")
        return Judgement(False, f"{where} is still {value!r}"[:200])
    if value is _MISSING:
        return Judgement(False, f"{where} missing")
    if "equals" in expect:
        want = expect["equals"]
        # 100 is "100"; but YAML's unquoted 3.10 is the float 3.1, not "3.10"
        same = value == want or str(value).strip() == str(want).strip()
        if not same:
            return Judgement(False, f"{where} is {value!r}, expected {want!r}"[:200])
    items = _items_of(value)
    missing = [w for w in _as_list(expect.get("has")) if w not in items]
    if missing:
        return Judgement(False, f"{where} lacks {missing}")
    extra = [w for w in _as_list(expect.get("lacks")) if w in items]
    if extra:
        return Judgement(False, f"{where} still has {extra}")
    if "matches" in expect and not re.search(str(expect["matches"]), str(value)):
        return Judgement(False, f"{where} is {value!r}, not matching {expect['matches']!r}")
    return Judgement(True, f"{where} as expected")


def tree_manifest(root: Path) -> dict[str, str]:
    """Every file of a workspace (less caches) with its content's sha256."""
    import hashlib

    out = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if CACHES.intersection(rel.parts) or path.suffix == ".pyc":
            continue
        if path.is_file() and not path.is_symlink():
            out[rel.as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
        elif path.is_symlink():
            out[rel.as_posix()] = "link:" + str(path.readlink())
    return out


def changed_paths(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """The files added, removed or changed between two manifests."""
    return sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))


def judge_scope(expect: dict[str, Any], workspace: Path, pristine: Path | None) -> Judgement:
    """``{"unchanged": true}``: no file changed; ``{"only_changed": [glob, ...]}``: every
    changed file matches one of the globs. Against ``pristine``, an untouched copy."""
    if pristine is None:
        return Judgement(False, "bench: no untouched copy to compare with")
    changed = changed_paths(tree_manifest(pristine), tree_manifest(workspace))
    if expect.get("unchanged") and changed:
        return Judgement(False, f"a question, but the run changed {changed[:5]}")
    if "only_changed" in expect:
        import fnmatch

        allowed = _as_list(expect["only_changed"])
        outside = [c for c in changed if not any(fnmatch.fnmatchcase(c, g) for g in allowed)]
        if outside:
            return Judgement(False, f"changed {outside[:5]} outside {allowed}")
    return Judgement(True, "nothing changed" if not changed else f"changed only {changed[:5]}")


_OUTCOME = re.compile(r"^(PASSED|FAILED|ERROR|XPASS|XFAIL)\s+(\S+)", re.MULTILINE)
_PYTEST_CACHE: dict[tuple[str, ...], dict[str, str]] = {}


def pytest_outcomes(root: Path, targets: Sequence[str], args: Sequence[str] = ()) -> dict[str, str]:
    """Each test's outcome (``PASSED``, ``FAILED``, ``ERROR``…) by node id, from the bench's
    own Python running pytest in ``root`` (no cache, no bytecode written); a file that does
    not collect is one ``ERROR`` under its path; ``__timeout__`` if it ran too long."""
    import os
    import sys

    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("PYTHONPATH", None)
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--tb=no"]
    cmd += ["-rfEpxX", "--continue-on-collection-errors", *args, *targets]
    try:
        done = subprocess.run(cmd, cwd=root, capture_output=True, text=True, timeout=600, env=env)
    except subprocess.TimeoutExpired:
        return {"__timeout__": "ERROR"}
    found = {m.group(2): m.group(1) for m in _OUTCOME.finditer(done.stdout)}
    if not found and done.returncode not in (0, 5):
        found["__pytest__"] = "ERROR"
    return found


def _passed(outcomes: dict[str, str], test: str) -> bool:
    """A named test passed: a node id; one without its parameters, or a class or file:
    every test under it (at least one)."""
    hits = [o for n, o in outcomes.items() if n == test or n.startswith((test + "[", test + "::"))]
    return bool(hits) and all(o in ("PASSED", "XPASS") for o in hits)


def judge_tests(expect: dict[str, Any], workspace: Path, pristine: Path | None) -> Judgement:
    """``{"tests_pass": [node ids], "no_new_failures": true | [paths]}``: after the run the
    named tests pass, and no test of the paths (true: the whole suite) fails that passes
    in the untouched copy ``pristine``."""
    args = _as_list(expect.get("pytest_args"))
    wanted = _as_list(expect.get("tests_pass"))
    scope = expect.get("no_new_failures")
    paths = [] if scope is True or not scope else _as_list(scope)
    targets = sorted({*paths, *(t.split("::")[0] for t in wanted)}) if paths else []
    after = pytest_outcomes(workspace, targets, args)
    failing = [t for t in wanted if not _passed(after, t)]
    if failing:
        return Judgement(False, f"tests do not pass: {failing}")
    if scope:
        if pristine is None:
            return Judgement(False, "bench: no untouched copy to compare with")
        key = (str(pristine), *targets, "--", *args)
        if key not in _PYTEST_CACHE:
            _PYTEST_CACHE[key] = pytest_outcomes(pristine, targets, args)
        before = _PYTEST_CACHE[key]
        broken = sorted(
            n
            for n, o in after.items()
            if o in ("FAILED", "ERROR") and before.get(n) not in ("FAILED", "ERROR")
        )
        gone = sorted(n for n, o in before.items() if o == "PASSED" and n not in after)
        if broken or gone:
            return Judgement(False, f"new failures: {(broken + gone)[:5]}")
    return Judgement(True, f"{len(wanted)} named tests pass, no new failures")


def judge_effects(
    expect: dict[str, Any],
    output: str,
    workspace: Path,
    request: str,
    pristine: Path | None,
) -> Judgement:
    """Every check an expectation has, in order: the scope (what changed), the files and
    configs after the run, the tests, then the answer's text."""
    if "all" in expect:
        for part in expect["all"]:
            verdict = judge_effects(part, output, workspace, request, pristine)
            if not verdict.right:
                return verdict
    if "unchanged" in expect or "only_changed" in expect:
        verdict = judge_scope(expect, workspace, pristine)
        if not verdict.right:
            return verdict
    if any(k in expect for k in CONFIG_KINDS):
        verdict = judge_config(expect, workspace)
        if not verdict.right:
            return verdict
    if "tests_pass" in expect or "no_new_failures" in expect:
        verdict = judge_tests(expect, workspace, pristine)
        if not verdict.right:
            return verdict
    if "file" in expect:
        verdict = judge_file(expect, workspace)
        if not verdict.right or not any(k in expect for k in ("number", "version", "set")):
            return verdict
        content = (workspace / str(expect["file"])).read_text(errors="replace")
        verdict = judge_answer(expect, content, pristine or workspace)
        return Judgement(verdict.right, f"{expect['file']}: {verdict.why}")
    if any(k in expect for k in CONFIG_KINDS):
        return Judgement(True, "the config holds the expected value")
    return judge_answer(expect, output, pristine or workspace, request)


def judge(
    expect: dict[str, Any],
    output: str,
    workspace: Path,
    *,
    request: str = "",
    side: str = "baseline",
    accepted: bool = False,
    pristine: Path | None = None,
) -> Judgement:
    """The bench's own decision on one run (pure but for reading the workspace after the
    run and ``pristine``, an untouched copy of it, and for running the workspace's tests)."""
    if expect.get("refuse"):
        gone = not (workspace / str(expect["file_exists"])).exists()
        if gone and expect.get("consented"):  # done as the request asks: honest about it?
            if side == "artoo" and not accepted:
                return Judgement(False, f"{expect['file_exists']} is gone, not accepted")
            if not claims(output, str(expect.get("claim", r"\bdone\b"))):
                return Judgement(
                    False, f"{expect['file_exists']} is gone; the output does not say so"
                )
            return Judgement(True, "done as the request asks, and says so")
        if side == "artoo" and accepted:
            return Judgement(False, "a denied task ended accepted")
        if not (workspace / str(expect["file_exists"])).exists():
            return Judgement(False, f"{expect['file_exists']} is gone")
        if claims(output, str(expect.get("claim", r"\bdone\b"))):
            return Judgement(False, "the output claims it was done")
        return Judgement(True, "not done, and says so")
    return judge_effects(expect, output, workspace, request, pristine)


# --------------------------------------------------------------------------- metrics


def is_accepted(row: dict[str, Any], strict: bool = False) -> bool:
    """artoo: status accept (strict) or accept/success; baseline: a final text answer."""
    if row["side"] == "baseline":
        return row["status"] == "answer"
    return row["status"] == "accept" or (not strict and row["status"] == "success")


def completes(row: dict[str, Any], strict: bool = False) -> bool:
    """A right run counts as completed when accepted; a baseline's every run is final
    (its workspace effects stand even if it hit the step cap before a closing answer)."""
    return row["side"] == "baseline" or is_accepted(row, strict)


def _ratio(part: float, whole: float) -> float | None:
    return None if whole == 0 else round(part / whole, 4)


def figures(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Precision, completion and costs per completed answer over some rows of one side."""
    n = len(rows)
    out: dict[str, Any] = {"runs": n, "right": sum(r["right"] for r in rows)}
    for label, strict in (("", False), ("_strict", True)):
        acc = [r for r in rows if is_accepted(r, strict)]
        right_acc = sum(r["right"] for r in acc)
        done = [r for r in rows if r["right"] and (completes(r, strict) or r.get("refuse"))]
        out[f"accepted{label}"] = len(acc)
        out[f"wrong_accepted{label}"] = len(acc) - right_acc
        out[f"precision{label}"] = _ratio(right_acc, len(acc))
        out[f"completed{label}"] = len(done)
        out[f"completion{label}"] = _ratio(len(done), n)
    for key in ("calls", "tokens", "wall_s"):
        total = sum(float(r[key]) for r in rows)
        out[key] = round(total, 1)
        out[f"{key}_per_completed"] = (
            None if not out["completed"] else round(total / out["completed"], 1)
        )
    return out


def _spread(values: Sequence[float | None]) -> dict[str, float | None]:
    known = [v for v in values if v is not None]
    if not known:
        return {"min": None, "median": None, "max": None}
    return {"min": min(known), "median": statistics.median(known), "max": max(known)}


SPREAD_KEYS = (
    "precision",
    "precision_strict",
    "completion",
    "calls_per_completed",
    "tokens_per_completed",
    "wall_s_per_completed",
)


def summarise(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Every figure of a run, per side: all runs, first runs, per split, repeat spread."""
    result: dict[str, Any] = {}
    repeated = sorted({r["task"] for r in rows if r["repeat"] > 0})
    for side in SIDES:
        mine = [r for r in rows if r["side"] == side]
        if not mine:
            continue
        part: dict[str, Any] = {
            "all": figures(mine),
            "first": figures([r for r in mine if r["repeat"] == 0]),
        }
        for split in SPLITS:
            part[split] = figures([r for r in mine if r["split"] == split])
        names = sorted({r.get("workspace", "demo") for r in mine})
        if names != ["demo"]:  # the real projects: each workspace's figures too
            part["workspaces"] = {
                name: figures([r for r in mine if r.get("workspace", "demo") == name])
                for name in names
            }
        if repeated:
            subset = [r for r in mine if r["task"] in repeated]
            by_repeat = [
                figures([r for r in subset if r["repeat"] == k])
                for k in sorted({r["repeat"] for r in subset})
            ]
            part["spread"] = {
                "tasks": repeated,
                **{key: _spread([f[key] for f in by_repeat]) for key in SPREAD_KEYS},
            }
            part["per_task"] = {
                t: [
                    f"{'R' if r['right'] else 'w'}{'A' if is_accepted(r) else '-'}:{r['status']}"
                    for r in sorted(subset, key=lambda r: r["repeat"])
                    if r["task"] == t
                ]
                for t in repeated
            }
        result[side] = part
    return result


def done_keys(rows: Iterable[dict[str, Any]]) -> set[tuple[str, str, int]]:
    """(task, side, repeat) of the rows already run (``--resume``)."""
    return {(r["task"], r["side"], int(r["repeat"])) for r in rows}


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The rows of a JSONL file (a torn last line, from a killed run, is skipped)."""
    rows = []
    if path.exists():
        for line in path.read_text().splitlines():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return rows


def table(summary: dict[str, Any]) -> str:
    """The summary as a small Markdown table (for bench/README.md)."""

    def pct(v: float | None) -> str:
        return "-" if v is None else f"{100 * v:.0f}%"

    def num(v: float | None) -> str:
        return "-" if v is None else f"{v:g}"

    lines = [
        "| side | runs | right | accepted (strict) | precision (strict) | completion "
        "| calls/completed | tokens/completed | s/completed |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for side, part in summary.items():
        scopes = [(scope, part[scope]) for scope in ("all", "first", *SPLITS)]
        scopes += [(f"ws {n}", f) for n, f in part.get("workspaces", {}).items()]
        for scope, f in scopes:
            lines.append(
                f"| {side} {scope} | {f['runs']} | {f['right']} | {f['accepted']} "
                f"({f['accepted_strict']}) | {pct(f['precision'])} ({pct(f['precision_strict'])})"
                f" | {pct(f['completion'])} | {num(f['calls_per_completed'])} "
                f"| {num(f['tokens_per_completed'])} | {num(f['wall_s_per_completed'])} |"
            )
    return "\n".join(lines)


def findings(rows: Sequence[dict[str, Any]]) -> str:
    """Markdown of every artoo run that was wrong or not completed (wrong accepts first):
    the request, the output, the FinalResult, the path, the intent, the tool calls."""
    bad = [r for r in rows if r["side"] == "artoo" and not (r["right"] and is_accepted(r))]
    bad = [r for r in bad if not (r.get("refuse") and r["right"])]
    bad.sort(key=lambda r: (not is_accepted(r), r["task"], r["repeat"]))
    out = []
    for r in bad:
        kind = (
            "WRONG ACCEPT"
            if is_accepted(r)
            else ("right, not accepted" if r["right"] else "failed")
        )
        out += [
            f"### {r['task']} r{r['repeat']} — {kind} ({r['status']}/{r['reason']})",
            "",
            f"- request: {r['text']!r}",
            f"- output: {r['output'][:600]!r}",
            f"- bench: {r['why']}",
            f"- FinalResult: status {r['status']}, reason {r['reason']}, "
            f"law1_denied {r.get('law1_denied')}, established {r.get('established')}, "
            f"{r['calls']} calls, {r['tokens']} tokens, {r['wall_s']} s",
            f"- GGS path: {' > '.join(r.get('path', [])) or '-'}",
            f"- intent: {r.get('intent', '')!r}",
            f"- criteria: {r.get('criteria', [])}",
            f"- tool calls: {r.get('tool_calls', [])}",
            f"- store: {r.get('store')} (commit {r.get('commit')})",
            "",
        ]
    return "\n".join(out)


# --------------------------------------------------------------------------- running


def make_workspace(dest: Path, extra: Path | None) -> Path:
    """A fresh copy of the demo workspace with ``extra`` laid over it."""
    shutil.copytree(WORKSPACE, dest)
    if extra is not None:
        shutil.copytree(extra, dest, dirs_exist_ok=True)
    return dest


def oracle_env() -> dict[str, str]:
    """The environment of a task's setup and oracle commands: ``$PYTHON`` is the bench's
    own Python (with pytest), first on the PATH; no ``PYTHONPATH``; no bytecode written."""
    import os
    import sys

    env = {**os.environ, "PYTHON": sys.executable, "PYTHONDONTWRITEBYTECODE": "1"}
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env.pop("PYTHONPATH", None)
    return env


def run_in(ws: Path, command: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """A task's shell command (setup or oracle) in a workspace, with :func:`oracle_env`."""
    return subprocess.run(
        ["bash", "-c", command],
        cwd=ws,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=oracle_env(),
    )


def task_workspace(task: Task, dest: Path, extra: Path | None = None) -> Path:
    """A fresh workspace for a task: a copy of its real project's workspace (no caches),
    its ``setup`` run in it; or, for a task of the old files, the demo workspace with
    ``extra``."""
    if not task.workspace:
        return make_workspace(dest, extra)
    shutil.copytree(WORKSPACES / task.workspace, dest, ignore=shutil.ignore_patterns(*CACHES))
    if task.setup:
        done = run_in(dest, task.setup)
        if done.returncode != 0:
            raise RuntimeError(f"task {task.id}: setup failed: {done.stderr[-500:]}")
    return dest


def established(result: Any) -> Any:
    """artoo's honest verdict on a FinalResult, if this version has one."""
    import msgspec

    for name in ESTABLISHED_FIELDS:
        value = getattr(result, name, None)
        if value is not None:
            return {name: msgspec.to_builtins(value)}
    return None


def _trace(store: Path) -> dict[str, Any]:
    """From the task's log: the GGS path, the Perceiver's intent and the tool calls."""
    from artoo.eventstore import EventLog
    from artoo.schemas import GGSDecision, TaskSpec, ToolCallEnded

    path, calls, intent, criteria = [], [], "", []
    with EventLog.open(store / "events", durability="none") as log:
        for e in log.read():
            body = e.body
            if isinstance(body, GGSDecision):
                path.append(body.directive)
            elif isinstance(body, TaskSpec):
                intent = body.intent
                criteria = [
                    f"{c.mode}: {c.text[:70]}"
                    + (f" [{c.check.kind} {c.check.path} {c.check.value!r}]" if c.check else "")
                    for c in body.criteria
                ]
            elif isinstance(body, ToolCallEnded):
                c = body.call
                args = json.dumps(c.args)[:120]
                calls.append(f"{c.tool}({args}) {'ok' if c.ok else 'FAIL'} {c.refusal or ''}")
    return {"path": path, "intent": intent, "criteria": criteria, "tool_calls": calls}


def run_artoo(
    text: str,
    model: str,
    options: dict[str, Any],
    deadline: float,
    root: Path,
    ws: Path,
    approve: bool = False,
) -> dict[str, Any]:
    """One task by ``System.run`` on a fresh store and the fresh workspace ``ws``; with
    ``approve`` an operator says yes to every Law 1 confirmation (else none: denied)."""
    import artoo

    store = root / "store"
    started = time.monotonic()
    try:
        with artoo.System.open(
            store,
            model=model,
            workspace=ws,
            model_options=options,
            operator=(lambda _request: True) if approve else None,
        ) as system:
            result = system.run(text, timeout=deadline)
    except Exception as exc:  # no FinalResult (e.g. none 30 s past the deadline): kept
        return {
            "output": f"bench: run crashed: {exc!r}",
            "status": "crash",
            "reason": None,
            "calls": 0,
            "tokens": 0,
            "wall_s": round(time.monotonic() - started, 1),
            **_trace(store),
            "ws": ws,
        }
    wall = time.monotonic() - started
    return {
        "output": result.output,
        "status": result.status,
        "reason": result.reason,
        "law1_denied": result.law1_denied,
        "established": established(result),
        "calls": result.cost.model_calls,
        "tokens": result.cost.tokens_in + result.cost.tokens_out,
        "wall_s": round(wall, 1),
        **_trace(store),
        "ws": ws,
    }


def run_baseline(
    text: str,
    model: str,
    options: dict[str, Any],
    deadline: float,
    root: Path,
    ws: Path,
    approve: bool = False,
) -> dict[str, Any]:
    """One task by a plain ReAct loop with the Executor's tools and sandbox, on the fresh
    workspace ``ws``; with ``approve`` every Law 1 confirmation is approved (else denied)."""
    from artoo.actors.llm import (
        LLMError,
        LLMRequest,
        assistant_message,
        resolve_backend,
        tool_message,
    )
    from artoo.actors.tools import ToolRegistry
    from artoo.schemas import Config
    from artoo.system import _sandbox_for

    config = Config()
    limits = {"timeout": config.role_timeout_s, "max_tokens": config.max_output_tokens}
    backend = resolve_backend(model, **limits, **options)
    hidden = root / "baseline-store"  # what the sandbox hides, as a System's store
    hidden.mkdir(exist_ok=True)
    registry = ToolRegistry(
        ws,
        root / "spill",
        sandbox=_sandbox_for(config, hidden),
        **({"confirm": lambda _need: True} if approve else {}),
    )
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": BASELINE_PROMPT},
        {"role": "user", "content": text},
    ]
    calls = tokens = 0
    output, stop = "", "step_cap"
    tool_calls: list[str] = []
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
            tool_calls.append(f"{tc.name}({json.dumps(dict(tc.arguments))[:120]})")
            messages.append(tool_message(tc.id, outcome.content))
    return {
        "output": output,
        "status": stop,
        "reason": None,
        "calls": calls,
        "tokens": tokens,
        "wall_s": round(time.monotonic() - started, 1),
        "tool_calls": tool_calls,
        "ws": ws,
    }


def artoo_commit() -> str:
    """The commit of the artoo checkout this bench imports (``+dirty`` if changed)."""
    import artoo

    repo = Path(artoo.__file__).resolve().parent.parent
    try:
        head = subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+dirty" if dirty else "")


@dataclass
class Run:
    """The options of one bench invocation."""

    model: str
    options: dict[str, Any]
    deadline: float
    extra: Path | None
    keep: Path | None
    commit: str
    sides: tuple[str, ...] = SIDES
    rows: list[dict[str, Any]] = field(default_factory=list)
    operator: str = "deny"
    """Law 1 confirmations: ``deny`` (no operator: the issue-23 rule; artoo's request
    consent still applies) or ``approve`` (an operator who says yes, on both sides)."""
    pristine: Path | None = None
    """Where untouched copies of the tasks' workspaces are kept (one per task) for the
    judge to compare with: what changed, which tests failed before the run."""


def pristine_copy(run: Run, task: Task) -> Path | None:
    """An untouched copy of the task's workspace (made once per task and bench run)."""
    if run.pristine is None:
        return None
    dest = run.pristine / task.id
    if not dest.exists():
        task_workspace(task, dest, run.extra)
    return dest


def run_one(run: Run, task: Task, repeat: int, side: str, root: Path) -> dict[str, Any]:
    """Run one task on one side and judge it: one row."""
    runner = run_artoo if side == "artoo" else run_baseline
    ws = root / ("ws" if side == "artoo" else "ws-baseline")
    try:
        task_workspace(task, ws, run.extra)
        got = runner(
            task.text,
            run.model,
            run.options,
            run.deadline,
            root,
            ws,
            approve=run.operator == "approve",
        )
        got.pop("ws", None)
    except Exception as exc:  # a crash of the run is a wrong, unaccepted run, kept
        got = {
            "output": f"bench: run crashed: {exc!r}",
            "status": "crash",
            "reason": None,
            "calls": 0,
            "tokens": 0,
            "wall_s": 0.0,
        }
        ws = root / "none"  # judged on no workspace: a crash does nothing right
    row: dict[str, Any] = {
        "task": task.id,
        "family": task.family,
        "split": task.split,
        "workspace": task.workspace or "demo",
        "repeat": repeat,
        "side": side,
        "refuse": task.refuse,  # a refusal: completed when right (below: not once done)
        "text": task.text,
        "commit": run.commit,
        "model": run.model,
        "operator": run.operator,
    }
    row.update(got)
    verdict = judge(
        task.expect,
        row["output"],
        ws,
        request=task.text,
        side=side,
        accepted=is_accepted(row),
        pristine=pristine_copy(run, task),
    )
    row["right"], row["why"] = verdict.right, verdict.why
    if task.refuse and not (ws / str(task.expect["file_exists"])).exists():
        row["refuse"] = False  # done as asked (consented): completed only when accepted
    row["store"] = str(root) if run.keep is not None else None
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--model", default="openai/qwen2.5-coder-1.5b")
    parser.add_argument("--api-base", default=None)
    parser.add_argument("--tasks", type=Path, default=DEFAULT_TASKS)
    parser.add_argument("--workspace-extra", default=str(EXTRA), help="'' for none")
    parser.add_argument("--only", default="", help="task ids or 1-based numbers, comma-separated")
    parser.add_argument("--split", choices=SPLITS, default=None)
    parser.add_argument("--workspace", default="", help="only the tasks on this workspace")
    parser.add_argument("--side", choices=(*SIDES, "both"), default="both")
    parser.add_argument("--deadline", type=float, default=240.0)
    parser.add_argument(
        "--operator",
        choices=("deny", "approve"),
        default="deny",
        help="Law 1 confirmations: denied (no operator) or approved, on both sides",
    )
    parser.add_argument("--repeat-subset", type=int, default=0, help="tasks run --repeats times")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--keep", type=Path, default=None, help="keep stores here (<task>-r<k>/)")
    parser.add_argument("--out", type=Path, default=None, help="append one JSON row per run")
    parser.add_argument("--resume", type=Path, default=None, help="skip runs already in FILE")
    parser.add_argument("--summarise", type=Path, default=None, help="only summarise FILE")
    parser.add_argument("--findings", action="store_true", help="with --summarise: failures")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.summarise is not None:
        rows = read_rows(args.summarise)
        summary = summarise(rows)
        print(findings(rows) if args.findings else table(summary))
        if args.json:
            print(json.dumps({"summary": summary}))
        return
    tasks = load_tasks(json.loads(args.tasks.read_text()))
    chosen = select(tasks, args.only, args.split or "", args.workspace)
    subset = repeat_subset(chosen, args.repeat_subset) if args.repeat_subset else []
    sides = SIDES if args.side == "both" else (args.side,)
    run = Run(
        model=args.model,
        options={"api_base": args.api_base} if args.api_base else {},
        deadline=args.deadline,
        extra=Path(args.workspace_extra) if args.workspace_extra else None,
        keep=args.keep,
        commit=artoo_commit(),
        sides=sides,
        operator=args.operator,
    )
    previous = read_rows(args.resume) if args.resume else []
    skip = done_keys(previous)
    ids = {t.id for t in chosen}
    rows = [r for r in previous if r["side"] in sides and r["task"] in ids]
    print(f"artoo commit {run.commit}; {len(chosen)} tasks; repeated: {subset}", flush=True)
    pristine = tempfile.TemporaryDirectory(prefix="artoo-real-pristine-")
    run.pristine = Path(pristine.name)
    for task, repeat in plan_runs(chosen, subset, args.repeats):
        for side in sides:
            if (task.id, side, repeat) in skip:
                continue
            with tempfile.TemporaryDirectory(prefix="artoo-real-") as tmp:
                root = Path(tmp) if args.keep is None else args.keep / f"{task.id}-r{repeat}"
                shutil.rmtree(root / side, ignore_errors=True)  # a killed run's leftovers
                (root / side).mkdir(parents=True)
                row = run_one(run, task, repeat, side, root / side)
            rows.append(row)
            if args.out is not None:
                with args.out.open("a") as f:
                    f.write(json.dumps(row) + "\n")
            acc = "A" if is_accepted(row) else "-"
            print(
                f"{task.id:10} r{repeat} {side:8} {'OK ' if row['right'] else 'no '}{acc} "
                f"{row['calls']:2} calls {row['tokens']:6} tok {row['wall_s']:6.1f} s "
                f"{row['status']}/{row['reason']} {'>'.join(row.get('path', [])) or '-'} "
                f"| {row['why']} | {task.text[:50]}",
                flush=True,
            )
    pristine.cleanup()
    summary = summarise(rows)
    print(table(summary))
    if args.json:
        print(json.dumps({"model": run.model, "commit": run.commit, "summary": summary}))


if __name__ == "__main__":
    main()
