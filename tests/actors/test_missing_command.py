"""A shell command that exits 127 (command not found) because a program it names is not
installed, while the program's sibling (``python`` → ``python3``) is: the model is told
so in a note after the result — the tool's, never the command's output.

The class, seen on a real small model: the sandbox has ``python3`` but no ``python``; the
model ran ``python src/app.py``, ``python -c …``, ``which python``, ``python --version``,
each failing, again and again."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from artoo.actors.law1 import program_names
from artoo.actors.tools import ToolOutcome, ToolRegistry
from artoo.actors.verification.derive import tool_outputs

NOTE = "[fakecmd is not installed here; fakecmd3 is: use fakecmd3]"


def _program(directory: Path, name: str) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(f"#!/bin/sh\necho {name} ran\n")
    path.chmod(0o755)


def _ran(tools: ToolRegistry, command: str) -> ToolOutcome:
    return tools.call("shell", {"command": command})


def _sandbox_missing() -> str | None:
    if sys.platform != "linux":
        return "the sandbox needs Linux"
    from artoo.actors.tools import probe

    return probe()


def test_the_names_a_command_line_runs_are_read_as_written() -> None:
    assert program_names("FOO=1 python3 -c 'x' | wc -l; sudo pip list") == ["python3", "wc", "pip"]
    assert program_names("out=$(fakecmd -V); /usr/bin/python x; $PY y") == [
        "",
        "/usr/bin/python",
        "",
        "fakecmd",
    ]


@pytest.fixture
def tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ToolRegistry:
    """A registry without the sandbox whose commands' PATH holds ``fakecmd3``, no
    ``fakecmd``, and the system's directories; its results are saved in ``spill``."""
    _program(tmp_path / "bin", "fakecmd3")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:/usr/bin:/bin")
    (tmp_path / "ws").mkdir()
    return ToolRegistry(tmp_path / "ws", tmp_path / "spill")


def test_a_missing_program_whose_sibling_is_installed_gets_a_note(
    tools: ToolRegistry, tmp_path: Path
) -> None:
    outcome = _ran(tools, "fakecmd --version | head -1; fakecmd -h")
    call = outcome.call
    assert call.exit_code == 127 and not call.ok
    assert outcome.content.endswith("\n" + NOTE)  # once, after the result
    assert outcome.content.count(NOTE) == 1
    # the tool's note, not the command's output: in no field the proof reads
    for text in (call.output_preview, call.stdout, call.stderr, outcome.output):
        assert "not installed here" not in (text or "")
    assert not any("not installed here" in t for t in tool_outputs([call]))
    saved = (tmp_path / "spill" / "shell_1.txt").read_text()
    assert "not installed here" not in saved
    assert _ran(tools, "fakecmd3").call.exit_code == 0  # the sibling the note names runs


def test_no_note_without_an_installed_sibling(tools: ToolRegistry) -> None:
    for command in ("othercmd --version", "./fakecmd", "exit 127", "fakecmd3 && othercmd"):
        outcome = _ran(tools, command)
        assert outcome.call.exit_code == 127, command
        assert "not installed here" not in outcome.content, command


@pytest.mark.skipif(_sandbox_missing() is not None, reason="needs the sandbox")
def test_in_the_sandbox_a_program_counts_where_the_sandbox_shows_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On the host ``fakecmd`` is installed (in a directory the sandbox does not show) and
    runs; in the sandbox it is not found, and its sibling — in a directory the sandbox
    shows (``Config.tools.read``) — is named."""
    from artoo.actors.tools import Sandbox

    hidden, shown = tmp_path / "hidden", tmp_path / "shown"
    _program(hidden, "fakecmd")
    _program(shown, "fakecmd3")
    monkeypatch.setenv("PATH", f"{hidden}:{shown}:/usr/bin:/bin")
    (tmp_path / "ws").mkdir()
    host = ToolRegistry(tmp_path / "ws", tmp_path / "spill-host")
    assert _ran(host, "fakecmd").call.exit_code == 0
    boxed = ToolRegistry(tmp_path / "ws", tmp_path / "spill", sandbox=Sandbox(read=(shown,)))
    outcome = _ran(boxed, "fakecmd")
    assert outcome.call.exit_code == 127 and outcome.call.sandboxed
    assert outcome.content.endswith("\n" + NOTE)
    assert "fakecmd3 ran" in _ran(boxed, "fakecmd3").content


@pytest.mark.skipif(_sandbox_missing() is not None, reason="needs the sandbox")
@pytest.mark.skipif(
    not Path("/usr/bin/python3").exists() or Path("/usr/bin/python").exists(),
    reason="needs python3 and no python in /usr/bin",
)
def test_python_in_the_sandbox_names_python3(tmp_path: Path) -> None:
    """The benchmark's case: the host's PATH may hold a ``python`` (a virtualenv, pyenv's
    shims) the sandbox does not show."""
    from artoo.actors.tools import Sandbox

    if any(Path(d, "python").exists() for d in ("/bin", "/usr/local/bin", "/opt")):
        pytest.skip("a python the sandbox shows")
    (tmp_path / "ws").mkdir()
    tools = ToolRegistry(tmp_path / "ws", tmp_path / "spill", sandbox=Sandbox())
    outcome = _ran(tools, "python -c 'print(1)'")
    assert outcome.call.exit_code == 127
    assert outcome.content.endswith("\n[python is not installed here; python3 is: use python3]")
