"""Every code block of README.md and docs/*.md runs (and the roles diagram is true).

- ```python blocks run, in a fresh directory holding a copy of the demo workspace, with
  every model that is not ``scripted:`` replaced by a scripted one (no network, no key);
- ```console and ```sh blocks: each line starting with ``artoo`` (or ``$ artoo``) runs
  through ``artoo.cli.main`` in one directory per page, in order, with ``--model`` of a
  real model replaced by the scripted one; other lines (output, ``export …``) are not run;
- ```toml blocks are parsed; ```text blocks (and bare fences) are not run: a page
  chooses ``text`` for what cannot run here (placeholders, a real model's output); any
  other language is refused, so a block never silently escapes the test.
"""

from __future__ import annotations

import re
import shlex
import shutil
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import artoo
from artoo.cli import main
from artoo.testing import write_script

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
DATA = ROOT / "artoo" / "demo_data"
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
RUN = ("python", "console", "sh", "toml", "text", "")  # a bare fence is text

ECHO = [
    {
        "role": "perceiver",
        "times": 0,
        "content": {"intent": "answer", "slug": "answer", "kind": "question", "answer": "text"},
    },
    {"role": "planner", "times": 0, "content": {"subtasks": [{"instruction": "Answer"}]}},
    {"role": "executor", "times": 0, "content": "done"},
]


def blocks(page: Path) -> Iterator[tuple[str, int, str]]:
    """``(language, line, code)`` of every fenced block of ``page``."""
    text = page.read_text(encoding="utf-8")
    for m in FENCE.finditer(text):
        yield m.group(1), text[: m.start()].count("\n") + 1, m.group(2)


def _cases(kind: tuple[str, ...]) -> list[Any]:
    return [
        pytest.param(page, line, code, id=f"{page.name}:{line}")
        for page in PAGES
        for lang, line, code in blocks(page)
        if lang in kind
    ]


def test_every_block_says_whether_it_runs() -> None:
    odd = [
        f"{page.name}:{line} ```{lang}"
        for page in PAGES
        for lang, line, _ in blocks(page)
        if lang not in RUN
    ]
    assert odd == [], "fence each block as python, console, sh, toml or text"


@pytest.fixture
def sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A directory with the demo workspace's files, as the working directory; a scripted
    model in place of every real one."""
    here = tmp_path / "here"
    shutil.copytree(DATA / "workspace", here)
    monkeypatch.chdir(here)
    monkeypatch.delenv("ARTOO_MODEL", raising=False)
    scripted = write_script(tmp_path / "echo.toml", ECHO)
    real_open = artoo.System.open.__func__  # type: ignore[attr-defined]

    def scripted_open(cls: type, *args: Any, model: str | None = None, **kw: Any) -> Any:
        if model is None or not model.startswith("scripted:"):
            model = scripted
        kw.pop("model_options", None)
        return real_open(cls, *args, model=model, **kw)

    monkeypatch.setattr(artoo.System, "open", classmethod(scripted_open))
    monkeypatch.setenv("DOCS_SCRIPTED_MODEL", scripted)
    return here


@pytest.mark.parametrize(("page", "line", "code"), _cases(("python",)))
def test_python_blocks_run(page: Path, line: int, code: str, sandbox: Path) -> None:
    exec(compile(code, f"{page.name}:{line}", "exec"), {"__name__": "__docs__"})


@pytest.mark.parametrize(("page", "line", "code"), _cases(("toml",)))
def test_toml_blocks_parse(page: Path, line: int, code: str) -> None:
    tomllib.loads(code)


def commands(code: str) -> list[list[str]]:
    """The ``artoo`` command lines of a console block (continuations joined)."""
    out = []
    lines = code.replace("\\\n", " ").splitlines()
    for raw in lines:
        text = raw.strip().removeprefix("$ ").strip()
        if not text.startswith("artoo ") and text != "artoo":
            continue
        args = shlex.split(text, comments=True)[1:]
        out.append(args)
    return out


def _scripted(args: list[str], model: str) -> list[str]:
    args = list(args)
    if "--model" in args:
        i = args.index("--model")
        if not args[i + 1].startswith("scripted:"):
            args[i + 1] = model
    elif args[:1] == ["run"]:
        args += ["--model", model]
    return args


@pytest.mark.parametrize(
    "page",
    [p for p in PAGES if any(lang in ("console", "sh") for lang, _, _ in blocks(p))],
    ids=lambda p: p.name,
)
def test_console_blocks_run(
    page: Path, sandbox: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    import os

    model = os.environ["DOCS_SCRIPTED_MODEL"]
    ran = 0
    for lang, line, code in blocks(page):
        if lang not in ("console", "sh"):
            continue
        for args in commands(code):
            args = _scripted(args, model)
            try:
                code_ = main(args)
            except SystemExit as exc:  # argparse: a usage error
                code_ = int(exc.code or 0)
            out = capsys.readouterr()
            allowed = (0, 1) if args[:1] == ["run"] else (0,)
            assert code_ in allowed, f"{page.name}:{line}: artoo {shlex.join(args)}\n{out.err}"
            ran += 1
    assert ran or page.name == "README.md"


def test_the_roles_diagram_is_drawn_from_the_roster() -> None:
    from artoo._diagram import PLACES, roster_svg
    from artoo.actors.roles.roster import ROSTER

    assert (ROOT / "docs" / "roles.svg").read_text(encoding="utf-8") == roster_svg(), (
        "the roster changed: python -m artoo._diagram docs/roles.svg"
    )
    svg = roster_svg()
    for spec in ROSTER:
        assert f">{spec.role.name}" in svg
    assert set(PLACES) - {"host"} <= {spec.role.name for spec in ROSTER}


def test_every_docs_page_is_linked_from_the_readme() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for page in PAGES[1:]:
        assert f"docs/{page.name}" in readme, f"README.md does not link docs/{page.name}"
