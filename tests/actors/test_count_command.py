"""count_command: the shell command the Planner hints for a count_matches check prints the
count the check measures (run in bash with globstar, as the shell tool runs it)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from artoo.actors.roles.planner import Calibration, with_count_hints
from artoo.actors.verification._counting import count_command, measure, parse_unit
from artoo.schemas import Check, Criterion, SubTask

BASH = shutil.which("bash")
pytestmark = pytest.mark.skipif(BASH is None, reason="needs bash")


def _printed(ws: Path, command: str) -> int:
    out = subprocess.run(
        [str(BASH), "-O", "globstar", "-c", command], cwd=ws, capture_output=True, text=True
    )
    words = out.stdout.split()
    return int(words[0]) if words else 0  # nothing matched: nothing printed


_LINE = st.sampled_from(["TODO: a", "done b", "x TODO", "", "  spaced  words here"])
_FILES = st.dictionaries(
    st.sampled_from(["a.py", "b.txt", "src/c.py", "src/m/d.py", "notes/e.txt"]),
    st.tuples(st.lists(_LINE, max_size=6), st.booleans()),
    min_size=1,
)


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(files=_FILES, data=st.data())
def test_the_hinted_command_prints_what_the_check_measures(
    tmp_path_factory: pytest.TempPathFactory,
    files: dict[str, tuple[list[str], bool]],
    data: st.DataObject,
) -> None:
    ws = tmp_path_factory.mktemp("ws")
    for name, (lines, newline) in files.items():
        (ws / name).parent.mkdir(parents=True, exist_ok=True)
        text = "\n".join(lines) + ("\n" if newline and lines else "")
        (ws / name).write_text(text)
    path = data.draw(st.sampled_from([*files, "src/**/*.py", "src", "**/*.txt"]))
    value = data.draw(
        st.sampled_from(["lines", "words", "bytes", "lines containing TODO", "files"])
    )
    command = count_command(path, value, directory=(ws / path).is_dir())
    assert command is not None
    parsed = parse_unit(value)
    assert parsed is not None
    measured = measure(path, parsed[0], ws, parsed[1])
    if isinstance(measured, str):
        return  # nothing to count (a glob matching nothing): no claim
    counts, _ = measured
    assert _printed(ws, command) in counts, (command, counts)


def test_paths_that_would_need_quoting_get_no_command() -> None:
    assert count_command("my notes.txt", "lines") is None
    assert count_command("a;rm -rf x", "lines") is None
    assert count_command("-rf", "lines") is None
    assert count_command("a.txt", "sentences") is None
    assert count_command("a.txt", "lines containing it's") == "grep -c -F 'it'\\''s' a.txt"


def _sub(tools: list[str]) -> SubTask:
    check = Check(kind="count_matches", path="notes/todo.txt", value="lines containing TODO")
    return SubTask(
        subtask_id="s",
        instruction="Count the TODO lines",
        tools=tools,
        criteria=[Criterion(id="t1", text="the count", mode="verifiable", check=check)],
    )


def test_the_planner_appends_the_hint_only_where_shell_may_run() -> None:
    (hinted,) = with_count_hints([_sub(["shell"])], Calibration())
    assert hinted.instruction.endswith("grep -c -F 'TODO' notes/todo.txt")
    (no_shell,) = with_count_hints([_sub(["glob"])], Calibration())
    assert no_shell.instruction == "Count the TODO lines"
    (blocked,) = with_count_hints([_sub([])], Calibration(blocked_tools=["shell"]))
    assert blocked.instruction == "Count the TODO lines"
    (target,) = with_count_hints([_sub([])], Calibration(blocked_targets=["notes/todo.txt"]))
    assert target.instruction == "Count the TODO lines"
    # applied twice, one hint
    assert with_count_hints([hinted], Calibration()) == [hinted]
