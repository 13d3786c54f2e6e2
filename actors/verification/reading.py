"""One reading of a request, checked by code and logged once (issue 40, policy 1).

The Perceiver's model reads the request into structure (:class:`ReadingAnswer`): its
kind, its targets (paths with roles), the shape of the answer, the values it gives, and
what inside a target it is about (a key, a count's unit, a call). Code checks that
structure against the request's own text and the workspace (:func:`checked`), the
stricter reading winning where they disagree, and writes the task's criteria from it
(:func:`criteria_of`). Nothing here reads the request's *wording*: only whether a value,
key, path or call the model gives occurs in it, and what the workspace holds.

Pure: the workspace is read by the caller into ``seen`` (:func:`look`), which the
TaskSpec logs, so ``artoo replay --verify`` recomputes the reading from the log.
"""

from __future__ import annotations

import ast
import glob as globlib
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import msgspec

from artoo.schemas import Check, Criterion, Target, TargetRole, TaskSpec

from ._formats import format_of
from .derive import call_root

__all__ = [
    "ANSWERS",
    "CODE_DERIVED",
    "KINDS",
    "ROLES",
    "TESTS_SEEN",
    "UNITS",
    "Checked",
    "answers",
    "checked",
    "criteria_of",
    "look",
    "named",
    "normal_path",
    "writes",
]

KINDS = ("question", "change", "creation", "mixed")
ANSWERS = ("number", "name", "value", "boolean", "version", "list", "text")
UNITS = ("lines", "words", "chars", "bytes", "files", "matches")
ROLES = ("read", "write", "create", "delete")
TESTS_SEEN = ":tests"
"""The ``seen`` key that says whether the workspace has tests code can run."""
CODE_DERIVED = ("value_at", "count_matches", "evaluates")
"""The check kinds whose pass is a code derivation of a question's value."""

_PATHISH = re.compile(r"(?:[\w.*?-]+/)+[\w.*?-]*|[\w*?-]+\.[A-Za-z][\w]{0,7}\b")
_SEP = re.compile(r"[\s_\-]+")


class Checked(msgspec.Struct, frozen=True, kw_only=True):
    """A reading as code checked it: the fields a TaskSpec carries, and the notes."""

    kind: str
    shape: str = ""
    targets: list[Target] = []
    values: list[str] = []
    key: str = ""
    unit: str = ""
    call: str = ""
    notes: list[str] = []


def normal_path(raw: str) -> str | None:
    """A workspace-relative path as the reading keeps it, or None when it cannot be one:
    ``./a/b`` → ``a/b``; an absolute path, ``..``, or an empty one is None (pure)."""
    path = raw.strip().strip("`'\"").replace("\\", "/")
    while path.startswith("./"):
        path = path[2:]
    if not path or path.startswith("/") or path.startswith("~"):
        return None
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        return None
    return "/".join(parts) + ("/" if path.endswith("/") else "")


def named(text: str) -> list[str]:
    """The path-shaped tokens of a request, in order (pure): ``src/app.py``,
    ``pyproject.toml``, ``changelog.d/`` — read by their form (a slash, or a name with an
    extension), never by the words around them."""
    out = []
    for m in _PATHISH.finditer(text):
        path = normal_path(m.group().rstrip(".,;:?!"))
        if path is not None and path not in out:
            out.append(path)
    return out


def look(workspace: Path, paths: Iterable[str], *, tests: bool | None = None) -> dict[str, bool]:
    """What the workspace holds of ``paths`` (each: does it exist; a glob: does it match
    anything; ``x/``: is it a directory), plus :data:`TESTS_SEEN` when ``tests`` is given.
    Reads beneath the workspace only (a path leading out of it is absent)."""
    root = workspace.resolve()
    seen: dict[str, bool] = {}
    for path in paths:
        if any(ch in path for ch in "*?["):
            hits = globlib.glob(path, root_dir=root, recursive=True)
            seen[path] = bool(hits)
            continue
        full = root / path.rstrip("/")
        try:
            real = full.resolve()
        except OSError:
            seen[path] = False
            continue
        inside = real == root or root in real.parents
        seen[path] = inside and (real.is_dir() if path.endswith("/") else os.path.lexists(full))
    if tests is not None:
        seen[TESTS_SEEN] = tests
    return seen


def _norm(text: str) -> str:
    return _SEP.sub(" ", text.casefold()).strip()


def _occurs(value: str, text: str) -> bool:
    """Whether ``value`` occurs in ``text``, case and spacing aside (pure)."""
    v = " ".join(value.casefold().split())
    return bool(v) and v in " ".join(text.casefold().split())


def _key_named(key: str, text: str) -> bool:
    """Whether some component of a dotted key occurs in the request, separators aside
    (``tool.black.line-length`` in "black's line length")."""
    said = _norm(text)
    parts = [p for p in re.split(r"[.:/\[\]]+", key) if p.strip()]
    return any(_norm(p) and _norm(p) in said for p in parts)


def _call_named(call: str, text: str) -> bool:
    """Whether ``call`` is one Python expression every name and literal of which the
    request states (pure): ``slugify("Hello World")`` for a request that writes both."""
    try:
        tree = ast.parse(call.strip(), mode="eval")
    except (SyntaxError, ValueError):
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not re.search(rf"\b{re.escape(node.id)}\b", text):
            return False
        if isinstance(node, ast.Attribute) and not re.search(rf"\b{re.escape(node.attr)}\b", text):
            return False
        if isinstance(node, ast.Constant) and node.value is not None:
            if str(node.value) not in text and repr(node.value) not in text:
                return False
        if isinstance(node, ast.Lambda | ast.NamedExpr | ast.Await | ast.Yield):
            return False
    return isinstance(tree.body, ast.Call)


def checked(
    text: str,
    *,
    kind: str,
    shape: str = "",
    targets: Sequence[tuple[str, str]] = (),
    values: Sequence[str] = (),
    key: str = "",
    unit: str = "",
    call: str = "",
    seen: Mapping[str, bool],
) -> Checked:
    """The model's reading of ``text`` checked by code against the request and what the
    workspace held (``seen``), the stricter reading winning (pure). Each change is a note.

    Targets: paths normalized; one that cannot be a workspace path dropped; ``read``,
    ``write`` or ``delete`` of a path the workspace lacks: a write becomes ``create``,
    the others are dropped; ``create`` of an existing file becomes ``write``; every path
    the request names that the workspace holds and the reading lacks is added as
    ``read``. Values the request does not state are dropped; so is a key none of whose
    components it states, a unit outside :data:`UNITS` (``matches`` needs a value to
    count), and a call that is not one Python call of the request's own names and
    literals. A question writes nothing: its write and delete targets are read (a create
    target dropped); a change or a mix with nothing to write writes the paths its targets
    hold that the request's text names; a kind outside :data:`KINDS` is ``mixed`` (it
    must answer and prove its change); a question with no shape answers ``text``."""
    notes: list[str] = []
    kind = kind.strip().lower()
    if kind not in KINDS:
        notes.append(f"kind {kind or 'none'!r} is no kind: read as mixed")
        kind = "mixed"
    shape = shape.strip().lower()
    if shape not in ANSWERS:
        shape = ""
    out: list[Target] = []
    for raw_path, raw_role in targets:
        path = normal_path(raw_path)
        said = raw_role.strip().lower()
        role: TargetRole = said if said in ROLES else "read"  # type: ignore[assignment]
        if path is None:
            notes.append(f"target {raw_path!r} is no workspace path: dropped")
            continue
        there = seen.get(path, False)
        if role in ("read", "write", "delete") and not there:
            if role == "write":
                notes.append(f"{path} does not exist: create, not write")
                role = "create"
            else:
                notes.append(f"{path} does not exist: not a {role} target")
                continue
        elif role == "create" and there and not path.endswith("/"):
            notes.append(f"{path} exists: write, not create")
            role = "write"
        if not any(t.path == path and t.role == role for t in out):
            out.append(Target(path=path, role=role))
    for path in named(text):
        if seen.get(path) and not any(t.path.rstrip("/") == path.rstrip("/") for t in out):
            out.append(Target(path=path, role="read"))
            notes.append(f"{path}, which the request names, added as read")
    kept_values = []
    for v in values:
        if v.strip() and _occurs(v, text):
            kept_values.append(v.strip())
        elif v.strip():
            notes.append(f"value {v!r} is not in the request: dropped")
    if key.strip() and not _key_named(key, text):
        notes.append(f"key {key!r} is not named by the request: dropped")
        key = ""
    unit = unit.strip().lower()
    if unit and (unit not in UNITS or (unit == "matches" and not kept_values)):
        notes.append(f"unit {unit!r} cannot be counted: dropped")
        unit = ""
    if call.strip() and not _call_named(call, text):
        notes.append(f"call {call!r} is not the request's own: dropped")
        call = ""
    if not call.strip():  # a value that is the request's own call is the call asked
        found = next((v for v in kept_values if _call_named(v, text)), "")
        if found:
            notes.append(f"value {found!r} is the request's own call: the call")
            kept_values = [v for v in kept_values if v != found]
            call = found
    if kind == "question" and writes(out):  # a question writes nothing: the stricter
        notes.append("a question writes nothing: its targets are read")
        out = _deduped([Target(path=t.path, role="read") for t in out if t.role != "create"])
    if kind in ("change", "mixed") and not writes(out):
        named_here = [t for t in out if t.path.rstrip("/") in text and not _glob(t.path)]
        if named_here:  # a change must write something: what the request itself names
            notes.append("a change with nothing to write: the paths it names are written")
            out = _deduped(
                [Target(path=t.path, role="write") if t in named_here else t for t in out]
            )
    if kind in ("question", "mixed") and not shape:
        shape = "text"
    return Checked(
        kind=kind,
        shape=shape,
        targets=out,
        values=kept_values,
        key=key.strip(),
        unit=unit,
        call=call.strip(),
        notes=notes,
    )


def _glob(path: str) -> bool:
    return any(ch in path for ch in "*?[")


def _deduped(targets: Iterable[Target]) -> list[Target]:
    out: list[Target] = []
    for t in targets:
        if t not in out:
            out.append(t)
    return out


def writes(targets: Iterable[Target]) -> list[Target]:
    """The targets a change may write: role write, create or delete."""
    return [t for t in targets if t.role != "read"]


def answers(kind: str) -> bool:
    """Whether a request of ``kind`` must answer (a question, or a mix)."""
    return kind in ("question", "mixed")


def _criterion(cid: str, text: str, check: Check) -> Criterion:
    return Criterion(id=cid, text=text, mode="verifiable", check=check)


def _source(spec: TaskSpec, formats: Sequence[str]) -> Target | None:
    """The one read target of a format in ``formats`` (None: none or several)."""
    found = [t for t in spec.targets if t.role == "read" and format_of(t.path) in formats]
    return found[0] if len(found) == 1 else None


def _derivation(spec: TaskSpec) -> Check | None:
    """The code derivation of a question's value the reading allows, or None: the call
    run in the sandbox (a Python read target), the count (a read target and a unit), or
    the value at the key (a structured read target) — by the file's format."""
    into = next((t.path for t in writes(spec.targets) if t.role in ("create", "write")), "")
    into = into if spec.kind != "question" and not into.endswith("/") else ""
    if spec.call:  # the module: the read target the call starts from, else the one
        root = call_root(spec.call) or ""
        pys = [t for t in spec.targets if t.role == "read" and format_of(t.path) == "python"]
        own = [
            t for t in pys if t.path.removeprefix("src/").split("/")[0].removesuffix(".py") == root
        ]
        py = own[0] if own else (pys[0] if len(pys) == 1 else None)
        return Check(  # no target: the Planner finds the module by the call's first name
            kind="evaluates",
            path=py.path if py is not None else "",
            value=spec.call,
            shape=spec.shape,
            into=into,
        )
    reads = [t for t in spec.targets if t.role == "read"]
    if spec.unit and len(reads) == 1:
        unit = spec.unit if spec.unit != "matches" else f"lines containing {spec.values[0]}"
        return Check(kind="count_matches", path=reads[0].path, value=unit, into=into)
    if spec.key:
        src = _source(spec, ("toml", "yaml", "ini", "json", "csv", "python"))
        if src is not None:
            return Check(kind="value_at", path=src.path, key=spec.key, shape=spec.shape, into=into)
    return None


def criteria_of(spec: TaskSpec) -> list[Criterion]:
    """The task's criteria, written by code from its checked reading (pure).

    A request that answers: ``answered`` (it states a value of its shape that a tool
    result of the task shows), and a code derivation when the reading allows one
    (:func:`_derivation`). A change: ``changed`` (the targets changed as the reading
    says), ``parses`` for each structured target written, ``reads_back`` for each value
    the request gives (at the key, by the file's parser, when there is one), and
    ``tests`` when the workspace has tests (nothing that passed fails; a test the request
    names passes). A creation whose content code derives is judged in its file."""
    out: list[Criterion] = []
    n = 0

    def add(text: str, check: Check) -> None:
        nonlocal n
        n += 1
        out.append(_criterion(f"t{n}", text, check))

    derived = _derivation(spec)
    if answers(spec.kind):
        add(
            f"the answer states the {spec.shape or 'text'} asked",
            Check(kind="answered", shape=spec.shape),
        )
    if derived is not None and (answers(spec.kind) or derived.into):
        where = derived.into or "the answer"
        add(f"{where} states what code derives from {derived.path}", derived)
    if spec.kind == "question":
        return out
    written = [t for t in writes(spec.targets)]
    add("the request's targets changed as read", Check(kind="changed"))
    for t in written:
        if (
            t.role != "delete"
            and not t.path.endswith("/")
            and format_of(t.path) not in ("text", "python")
        ):
            add(f"{t.path} still parses as {format_of(t.path)}", Check(kind="parses", path=t.path))
    into = [t.path for t in written if t.role in ("write", "create") and not t.path.endswith("/")]
    for v in _contents(spec):
        path = into[0] if len(into) == 1 else ""
        add(
            f"{path or 'a changed file'} holds {v!r}",
            Check(kind="reads_back", path=path, key=spec.key, value=v),
        )
    if spec.seen.get(TESTS_SEEN):
        tests = [t.path for t in spec.targets if _test_path(t.path)]
        tests += [v for v in spec.values if "::" in v]
        add("the workspace's tests pass as before", Check(kind="tests", value=" ".join(tests)))
    return out


def _contents(spec: TaskSpec) -> list[str]:
    """The values a change must leave in its files: not a test's id (pytest's
    ``path::name`` form: the ``tests`` criterion's), nor a path the workspace holds or
    the reading targets (a name of a file, not its content)."""
    paths = {t.path.rstrip("/") for t in spec.targets}
    return [
        v
        for v in spec.values
        if "::" not in v and v.rstrip("/") not in paths and not spec.seen.get(v)
    ]


def _test_path(path: str) -> bool:
    """Whether a path is a test module by pytest's default naming (its form)."""
    name = path.rstrip("/").rsplit("/", 1)[-1]
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))
