"""The Executor's tool registry: confinement, blocked targets, Law 1 gate, spillover."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from artoo.actors.tools import (
    CONTEXT_LIMIT,
    SPILL_LIMIT,
    ConfirmationNeeded,
    ToolOutcome,
    ToolRegistry,
    head_tail,
)
from artoo.schemas import FileEffect


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("print('hi')\n")
    (root / "notes.txt").write_text("hello\n")
    (root / "secrets").mkdir()
    (root / "secrets" / "key.txt").write_text("s3cret\n")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "private.txt").write_text("private\n")
    return root


@pytest.fixture
def spill(tmp_path: Path) -> Path:
    return tmp_path / "spill"


class Operator:
    """A confirm callback that records every request and answers as told."""

    def __init__(self, answer: bool) -> None:
        self.answer = answer
        self.requests: list[ConfirmationNeeded] = []

    def __call__(self, request: ConfirmationNeeded) -> bool:
        self.requests.append(request)
        return self.answer


def registry(ws: Path, spill: Path, **kwargs: Any) -> ToolRegistry:
    return ToolRegistry(ws, spill, **kwargs)


def big_text(n: int) -> str:
    """n characters, every 10-character block numbered, so any cut is visible."""
    blocks = (f"{i:09d}\n" for i in range(n // 10 + 1))
    return "".join(blocks)[:n]


# --------------------------------------------------------------------------- specs
def test_specs_describe_the_built_in_tools(ws: Path, spill: Path) -> None:
    specs = {s.name: s for s in registry(ws, spill).specs()}
    assert set(specs) == {"glob", "read_file", "write_file", "shell", "run_tests", "load_data"}
    read = specs["read_file"].parameters
    assert read["required"] == ["path"]
    assert read["properties"]["offset"] == {
        "type": "integer",
        "description": "the first character to read (0 = start of the file).",
        "default": 0,
    }
    assert specs["shell"].parameters["properties"]["timeout_s"]["anyOf"][1] == {"type": "null"}
    assert all(s.description for s in specs.values())
    assert [s.name for s in registry(ws, spill).specs(only=["shell", "glob"])] == [
        "glob",
        "shell",
    ]


# --------------------------------------------------------------------------- confinement
@pytest.mark.parametrize(
    ("tool", "args", "error"),
    [
        ("read_file", {"path": "../outside/private.txt"}, "escapes the workspace"),
        ("read_file", {"path": "src/../../outside/private.txt"}, "escapes the workspace"),
        ("write_file", {"path": "../evil.txt", "content": "x"}, "escapes the workspace"),
        ("glob", {"pattern": "../outside/*"}, "escapes the workspace"),
        ("read_file", {"path": "/etc/passwd"}, "is outside the workspace"),
        ("write_file", {"path": "/tmp/artoo-evil.txt", "content": "x"}, "outside the workspace"),
    ],
)
def test_paths_that_escape_are_refused(
    ws: Path, spill: Path, tool: str, args: dict[str, Any], error: str
) -> None:
    outcome = registry(ws, spill).call(tool, args)
    assert not outcome.call.ok
    assert error in (outcome.call.error or "")
    assert outcome.content.startswith("error: ")
    assert not (ws.parent / "evil.txt").exists()
    assert not Path("/tmp/artoo-evil.txt").exists()


def test_symlinks_out_of_the_workspace_are_refused(ws: Path, spill: Path) -> None:
    (ws / "out").symlink_to(ws.parent / "outside")
    (ws / "leak.txt").symlink_to(ws.parent / "outside" / "private.txt")
    tools = registry(ws, spill)
    for args in ({"path": "out/private.txt"}, {"path": "leak.txt"}):
        outcome = tools.call("read_file", args)
        assert not outcome.call.ok
        assert "through a symlink" in (outcome.call.error or "")
    written = tools.call("write_file", {"path": "out/new.txt", "content": "x"})
    assert "through a symlink" in (written.call.error or "")
    assert not (ws.parent / "outside" / "new.txt").exists()
    listing = tools.call("glob", {"pattern": "*"}).output
    assert "leak.txt" not in listing and "out/" not in listing
    assert "leading outside the workspace not shown" in listing


def test_absolute_path_inside_the_workspace_is_fine(ws: Path, spill: Path) -> None:
    outcome = registry(ws, spill).call("read_file", {"path": str(ws / "notes.txt")})
    assert outcome.call.ok
    assert outcome.call.target == "notes.txt"
    assert outcome.output == "hello\n"


def test_a_zero_limit_reads_a_whole_page_and_a_negative_offset_is_refused(
    ws: Path, spill: Path
) -> None:
    """A small model fills the optional ``limit`` with 0 (the bench: ``read_file(path,
    offset=0, limit=0)`` three attempts in a row, each refused): 0 means the default."""
    tools = registry(ws, spill)
    for limit in (0, -5):
        outcome = tools.call("read_file", {"path": "notes.txt", "offset": 0, "limit": limit})
        assert outcome.call.ok and outcome.output == "hello\n"
    (spill / "shell_9.txt").parent.mkdir(parents=True, exist_ok=True)
    (spill / "shell_9.txt").write_text("saved\n")
    page = tools.call("load_data", {"filename": "shell_9.txt", "limit": 0})
    assert page.call.ok and page.content.startswith("saved\n")
    bad = tools.call("read_file", {"path": "notes.txt", "offset": -1})
    assert not bad.call.ok and "offset must be >= 0" in (bad.call.error or "")


def test_an_offset_past_the_end_says_so(ws: Path, spill: Path) -> None:
    """A small model guessed ``offset=1000`` for a 435-character file in a fresh
    conversation, read an empty page and stated a name it never saw: a page past the end
    says where the end is and how to read from the start; the last page still reads."""
    tools = registry(ws, spill)
    past = tools.call("read_file", {"path": "notes.txt", "offset": 1000})
    assert past.call.ok
    assert past.output == (
        "[offset 1000 is past the end of 'notes.txt' (6 characters). "
        "Use read_file(path='notes.txt', offset=0) to read it.]"
    )
    tail = tools.call("read_file", {"path": "notes.txt", "offset": 2})
    assert tail.call.ok and tail.output == "llo\n"


# --------------------------------------------------------------------------- blocked
def test_blocked_targets_are_refused_on_the_path_and_its_parents(ws: Path, spill: Path) -> None:
    tools = registry(ws, spill, blocked_targets=["secrets"])
    for tool, args in [
        ("read_file", {"path": "secrets/key.txt"}),
        ("read_file", {"path": "./secrets/../secrets/key.txt"}),
        ("write_file", {"path": "secrets/new.txt", "content": "x"}),
        ("glob", {"pattern": "secrets/*"}),
        ("shell", {"command": "cat secrets/key.txt"}),
        ("shell", {"command": "ls -la ./secrets"}),
    ]:
        outcome = tools.call(tool, args)
        assert not outcome.call.ok, (tool, args)
        assert (outcome.call.error or "").startswith("blocked target 'secrets'")
    assert not (ws / "secrets" / "new.txt").exists()
    assert tools.call("read_file", {"path": "notes.txt"}).call.ok


def test_blocked_targets_are_found_inside_command_strings_and_option_values(
    ws: Path, spill: Path
) -> None:
    tools = registry(ws, spill, blocked_targets=["secrets"])
    for command in [
        'bash -c "cat secrets/key.txt"',
        "sh -ec 'cd src && cat ../secrets/key.txt' name",
        'sudo bash -c "wc -l $(ls secrets)"',
        'eval "cat secrets/key.txt"',
        "grep --file=secrets/key.txt notes.txt",
        "cd src && cat ../secrets/key.txt",
        "pushd src; wc -c ../secrets/key.txt",
    ]:
        outcome = tools.call("shell", {"command": command})
        assert (outcome.call.error or "").startswith("blocked target 'secrets'"), command
    for command in ['bash -c "cat notes.txt"', "grep --color=never hello notes.txt"]:
        assert tools.call("shell", {"command": command}).call.ok, command
    nested = tools.call("shell", {"command": 'bash -c "cat notes.txt"'}).call
    assert nested.target == "notes.txt"  # the path inside the string, not the string


def test_a_symlink_to_a_blocked_target_is_refused(ws: Path, spill: Path) -> None:
    (ws / "alias").symlink_to(ws / "secrets")
    outcome = registry(ws, spill, blocked_targets=["secrets"]).call(
        "read_file", {"path": "alias/key.txt"}
    )
    assert (outcome.call.error or "").startswith("blocked target 'secrets'")


def test_glob_hides_matches_under_blocked_targets(ws: Path, spill: Path) -> None:
    outcome = registry(ws, spill, blocked_targets=["secrets"]).call("glob", {"pattern": "**/*"})
    assert outcome.call.ok
    lines = outcome.output.splitlines()
    assert "src/app.py" in lines and "notes.txt" in lines
    assert not any(line.startswith("secrets") for line in lines)
    assert "[2 match(es) under blocked targets not shown]" in lines
    assert lines[0] == f"{len(lines) - 2} match(es):"  # the shown ones, counted first


def test_per_call_blocked_targets_and_tools(ws: Path, spill: Path) -> None:
    tools = registry(ws, spill)
    refused = tools.call("read_file", {"path": "src/app.py"}, blocked_targets=["src"])
    assert (refused.call.error or "").startswith("blocked target 'src'")
    assert tools.call("read_file", {"path": "src/app.py"}).call.ok
    no_shell = tools.call("shell", {"command": "ls"}, blocked_tools=["shell"])
    assert no_shell.call.error == "blocked tool 'shell'"
    by_program = tools.call("shell", {"command": "curl http://x"}, blocked_targets=["curl"])
    assert by_program.call.error == "blocked target 'curl' (program)"


# --------------------------------------------------------------------------- spillover
def test_small_result_goes_into_context_whole(ws: Path, spill: Path) -> None:
    outcome = registry(ws, spill).call("read_file", {"path": "notes.txt"})
    assert outcome.content == "hello\n"
    assert outcome.call.output_preview == "hello\n"
    assert outcome.call.spill_ref is None
    assert (spill / "read_file_1.txt").read_text() == "hello\n"


def test_medium_result_shows_head_and_tail_within_4kb(ws: Path, spill: Path) -> None:
    text = big_text(10_000)
    (ws / "medium.txt").write_text(text)
    outcome = registry(ws, spill).call("read_file", {"path": "medium.txt"})
    preview = outcome.call.output_preview
    assert len(preview) <= CONTEXT_LIMIT
    head, tail = preview.split("\n… [", 1)[0], preview.rsplit("] …\n", 1)[1]
    omitted = int(re.search(r"\[(\d+) chars omitted\]", preview).group(1))  # type: ignore[union-attr]
    assert text.startswith(head) and text.endswith(tail)
    assert len(head) + omitted + len(tail) == len(text)
    assert outcome.content == f"{preview}\n[Full result (10,000 chars) saved to 'read_file_1.txt'.]"
    assert outcome.call.spill_ref is None
    assert (spill / "read_file_1.txt").read_text() == text


def test_large_result_spills_with_a_pointer_and_reads_back_in_pages(ws: Path, spill: Path) -> None:
    tools = registry(ws, spill)
    outcome = tools.call("shell", {"command": "seq 1 20000"})
    full = outcome.output
    assert len(full) > SPILL_LIMIT
    assert outcome.call.spill_ref == "shell_1.txt"
    assert outcome.content.endswith(
        "Use load_data(filename='shell_1.txt') to read the full result.]"
    )
    assert outcome.content.startswith("exit code: 0\n--- stdout ---\n1\n2\n3\n")
    assert len(outcome.call.output_preview) <= CONTEXT_LIMIT
    assert (spill / "shell_1.txt").read_text() == full

    pages: list[str] = []
    offset = 0
    while offset < len(full):
        page = tools.call("load_data", {"filename": "shell_1.txt", "offset": offset})
        assert page.call.ok and page.call.spill_ref is None
        chunk = page.content[: min(SPILL_LIMIT, len(full) - offset)]
        pages.append(chunk)
        offset += len(chunk)
        if offset < len(full):
            assert f"Use load_data(filename='shell_1.txt', offset={offset})" in page.content
    assert "".join(pages) == full
    assert len(pages) == -(-len(full) // SPILL_LIMIT)
    assert sorted(p.name for p in spill.iterdir()) == ["shell_1.txt"]  # never re-spilled


def test_load_data_cuts_an_oversized_page_with_a_hint(ws: Path, spill: Path) -> None:
    (spill / "web_search_1.txt").parent.mkdir(parents=True, exist_ok=True)
    (spill / "web_search_1.txt").write_text(big_text(100_000))
    outcome = registry(ws, spill).call(
        "load_data", {"filename": "web_search_1.txt", "limit": 100_000}
    )
    assert outcome.content.startswith(big_text(SPILL_LIMIT))
    assert "use offset/limit to read smaller chunks" in outcome.content
    assert len(outcome.content) < SPILL_LIMIT + 300


def test_load_data_stays_in_the_spill_directory(ws: Path, spill: Path) -> None:
    tools = registry(ws, spill)
    for name in ("../ws/notes.txt", "/etc/passwd", ".."):
        assert not tools.call("load_data", {"filename": name}).call.ok
    missing = tools.call("load_data", {"filename": "shell_9.txt"})
    assert missing.call.error == "no saved result named 'shell_9.txt'"


def test_spill_counter_is_monotonic_and_restored(ws: Path, spill: Path) -> None:
    first = registry(ws, spill)
    first.call("shell", {"command": "echo one"})
    first.call("read_file", {"path": "notes.txt"})
    (spill / "web_scrape_41.txt").write_text("from an earlier session")
    second = registry(ws, spill)
    second.call("glob", {"pattern": "*.txt"})
    assert sorted(p.name for p in spill.iterdir()) == [
        "glob_42.txt",
        "read_file_2.txt",
        "shell_1.txt",
        "web_scrape_41.txt",
    ]


def test_refusals_are_not_spilled(ws: Path, spill: Path) -> None:
    registry(ws, spill).call("read_file", {"path": "../x"})
    assert list(spill.iterdir()) == []


# --------------------------------------------------------------------------- shell
def test_shell_reports_exit_code_stdout_and_stderr(ws: Path, spill: Path) -> None:
    outcome = registry(ws, spill).call("shell", {"command": "echo out; echo err >&2; exit 3"})
    assert outcome.call.exit_code == 3
    assert not outcome.call.ok
    assert outcome.call.error == "exit code 3"
    assert outcome.output == "exit code: 3\n--- stdout ---\nout\n--- stderr ---\nerr"


def test_shell_runs_in_the_workspace(ws: Path, spill: Path) -> None:
    outcome = registry(ws, spill).call("shell", {"command": "pwd; cat notes.txt"})
    assert outcome.call.ok and outcome.call.exit_code == 0
    assert f"{ws.resolve()}\nhello" in outcome.output
    assert outcome.call.target == "notes.txt"


def test_shell_timeout_kills_the_whole_process_group(ws: Path, spill: Path) -> None:
    tools = registry(ws, spill, shell_timeout_s=30.0)
    outcome = tools.call(
        "shell", {"command": "(sleep 1; echo late > late.txt) & sleep 20", "timeout_s": 0.3}
    )
    assert not outcome.call.ok
    assert outcome.call.exit_code is None
    assert outcome.call.error == "timed out after 0.3 s"
    assert outcome.output.startswith("timed out after 0.3 s; process killed")
    settled = tools.call("shell", {"command": "sleep 1.2; ls"})
    assert "late.txt" not in settled.output


def test_shell_timeout_cannot_exceed_the_registry_limit(ws: Path, spill: Path) -> None:
    outcome = registry(ws, spill, shell_timeout_s=0.2).call(
        "shell", {"command": "sleep 5", "timeout_s": 100}
    )
    assert outcome.call.error == "timed out after 0.2 s"


def test_shell_output_is_capped(ws: Path, spill: Path) -> None:
    outcome = registry(ws, spill, output_cap=1000).call(
        "shell", {"command": "head -c 5000 /dev/zero | tr '\\0' x"}
    )
    assert outcome.call.ok
    assert outcome.output == (
        "exit code: 0\n--- stdout ---\n" + "x" * 1000 + "\n[output capped at 1,000 bytes; "
        "4,000 bytes dropped]"
    )


# --------------------------------------------------------------------------- Law 1
def test_write_file_onto_an_existing_file_asks_and_is_refused_when_denied(
    ws: Path, spill: Path
) -> None:
    operator = Operator(answer=False)
    tools = registry(ws, spill, confirm=operator)
    outcome = tools.call(
        "write_file", {"path": "notes.txt", "content": "new"}, subtask_id="st-1", attempt=2
    )
    assert not outcome.call.ok
    reason = "would overwrite notes.txt (+1 -1 lines, 6 -> 3 bytes)"
    assert outcome.call.error == f"[LAW1] denied: {reason}"
    assert outcome.call.refusal == "law1_denied"
    assert (ws / "notes.txt").read_text() == "hello\n"
    effect = FileEffect(
        path="notes.txt",
        change="modified",
        size_before=6,
        size_after=3,
        summary="+1 -1 lines, 6 -> 3 bytes",
        diff="-hello\n+new",
    )
    assert outcome.call.effects == (effect,)
    assert operator.requests == [
        ConfirmationNeeded(
            tool="write_file",
            args={"path": "notes.txt", "content": "new"},
            target="notes.txt",
            reason=reason,
            action="write_file notes.txt",
            subtask_id="st-1",
            attempt=2,
            effects=(effect,),
        )
    ]


def test_write_file_with_the_same_content_changes_nothing_and_asks_nothing(
    ws: Path, spill: Path
) -> None:
    operator = Operator(answer=False)
    outcome = registry(ws, spill, confirm=operator).call(
        "write_file", {"path": "notes.txt", "content": "hello\n"}
    )
    assert outcome.call.ok and outcome.call.effects == ()
    assert operator.requests == []
    assert (ws / "notes.txt").read_text() == "hello\n"


def test_write_file_onto_an_existing_file_proceeds_when_approved(ws: Path, spill: Path) -> None:
    operator = Operator(answer=True)
    outcome = registry(ws, spill, confirm=operator).call(
        "write_file", {"path": "notes.txt", "content": "new"}
    )
    assert outcome.call.ok
    assert (ws / "notes.txt").read_text() == "new"
    assert len(operator.requests) == 1


def test_a_new_file_needs_no_confirmation(ws: Path, spill: Path) -> None:
    operator = Operator(answer=False)
    outcome = registry(ws, spill, confirm=operator).call(
        "write_file", {"path": "deep/er/new.txt", "content": "line\r\nline"}
    )
    assert outcome.call.ok and outcome.call.target == "deep/er/new.txt"
    assert (ws / "deep" / "er" / "new.txt").read_bytes() == b"line\r\nline"
    assert operator.requests == []


def test_the_default_confirm_denies(ws: Path, spill: Path) -> None:
    outcome = registry(ws, spill).call("shell", {"command": "rm notes.txt"})
    assert outcome.call.error == "[LAW1] denied: rm: deletes files"
    assert (ws / "notes.txt").exists()


def test_irreversible_shell_command_runs_only_when_approved(ws: Path, spill: Path) -> None:
    operator = Operator(answer=True)
    outcome = registry(ws, spill, confirm=operator).call("shell", {"command": "rm notes.txt"})
    assert outcome.call.ok
    assert not (ws / "notes.txt").exists()
    assert [(r.tool, r.action, r.target) for r in operator.requests] == [
        ("shell", "rm notes.txt", "notes.txt")
    ]


def test_a_failing_confirm_counts_as_denied(ws: Path, spill: Path) -> None:
    def broken(request: ConfirmationNeeded) -> bool:
        raise RuntimeError("operator unreachable")

    outcome = registry(ws, spill, confirm=broken).call("shell", {"command": "rm notes.txt"})
    assert (outcome.call.error or "").startswith("[LAW1] denied: rm: deletes files")
    assert "operator unreachable" in (outcome.call.error or "")
    assert (ws / "notes.txt").exists()


def test_everyday_shell_command_is_not_gated(ws: Path, spill: Path) -> None:
    operator = Operator(answer=False)
    outcome = registry(ws, spill, confirm=operator).call(
        "shell", {"command": "echo hi > fresh.txt && cat fresh.txt"}
    )
    assert outcome.call.ok and "hi" in outcome.output
    assert operator.requests == []


# --------------------------------------------------------------------------- host tools
def test_host_function_tool_gets_its_schema_from_type_hints(ws: Path, spill: Path) -> None:
    tools = registry(ws, spill)

    @tools.register
    def search(
        query: str,
        limit: int = 5,
        mode: Literal["fast", "deep"] = "fast",
        tags: list[str] | None = None,
        threshold: float = 0.5,
        exact: bool = False,
    ) -> dict[str, Any]:
        """Search the notes for a query.

        Args:
            query: what to look for.
            limit: at most this many
                results.
        """
        return {"query": query, "limit": limit, "mode": mode, "tags": tags, "t": threshold}

    assert callable(search)
    spec = next(s for s in tools.specs() if s.name == "search")
    assert spec.description == "Search the notes for a query."
    assert spec.parameters == {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "what to look for."},
            "limit": {"type": "integer", "description": "at most this many results.", "default": 5},
            "mode": {"enum": ["deep", "fast"], "type": "string", "default": "fast"},
            "tags": {
                "anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}],
                "default": None,
            },
            "threshold": {"type": "number", "default": 0.5},
            "exact": {"type": "boolean", "default": False},
        },
        "required": ["query"],
        "additionalProperties": False,
    }
    outcome = tools.call("search", {"query": "law", "limit": 2.0, "tags": ["a"], "threshold": 1})
    assert outcome.call.ok
    assert outcome.output == (
        '{\n  "query": "law",\n  "limit": 2,\n  "mode": "fast",\n  "tags": [\n    "a"\n  ],\n'
        '  "t": 1.0\n}'
    )


@pytest.mark.parametrize(
    ("args", "error"),
    [
        ({}, "Object missing required field `query`"),
        ({"query": 3}, "Expected `str`, got `int` - at `$.query`"),
        ({"query": "x", "limit": 2.5}, "Expected `int`, got `float` - at `$.limit`"),
        ({"query": "x", "limit": True}, "Expected `int`, got `bool` - at `$.limit`"),
        ({"query": "x", "mode": "slow"}, "Invalid enum value 'slow' - at `$.mode`"),
        ({"query": "x", "tags": ["a", 1]}, "Expected `str`, got `int` - at `$.tags[1]`"),
        ({"query": "x", "extra": 1}, "Object contains unknown field `extra`"),
    ],
)
def test_bad_arguments_give_a_clear_error(
    ws: Path, spill: Path, args: dict[str, Any], error: str
) -> None:
    tools = registry(ws, spill)

    def search(
        query: str,
        limit: int = 5,
        mode: Literal["fast", "deep"] = "fast",
        tags: list[str] | None = None,
    ) -> str:
        """Search."""
        return query

    tools.register(search)
    outcome = tools.call("search", args)
    assert not outcome.call.ok
    assert (outcome.call.error or "").startswith("bad arguments for search: " + error)


def test_unknown_tool_and_non_object_arguments_never_raise(ws: Path, spill: Path) -> None:
    tools = registry(ws, spill)
    unknown = tools.call("teleport", {"to": "mars"})
    assert not unknown.call.ok
    assert unknown.call.error == (
        "unknown tool 'teleport' (known tools: glob, load_data, read_file, run_tests, shell, "
        "write_file)"
    )
    assert unknown.call.args == {"to": "mars"}
    weird = tools.call("shell", ["ls"])  # type: ignore[arg-type]
    assert weird.call.error == (
        "bad arguments for shell: arguments must be a JSON object, got array"
    )


def test_a_failing_host_function_is_a_failed_call(ws: Path, spill: Path) -> None:
    tools = registry(ws, spill)

    def explode(path: str) -> str:
        """Always fails."""
        raise OSError("disk on fire")

    tools.register(explode)
    outcome = tools.call("explode", {"path": "x"}, blocked_targets=[])
    assert isinstance(outcome, ToolOutcome)
    assert outcome.call.error == "OSError: disk on fire"
    assert outcome.call.target == "x"
    blocked = tools.call("explode", {"path": "secrets/a"}, blocked_targets=["secrets"])
    assert blocked.call.error == "blocked target 'secrets' ('secrets/a')"


def test_register_rejects_what_it_cannot_describe(ws: Path, spill: Path) -> None:
    tools = registry(ws, spill)

    def untyped(x) -> str:  # type: ignore[no-untyped-def]
        return ""

    def variadic(*xs: str) -> str:
        return ""

    def shell(command: str) -> str:
        return ""

    def union(x: list[int] | tuple[int, ...]) -> str:  # two array-like types
        return ""

    with pytest.raises(TypeError, match="needs a type hint"):
        tools.register(untyped)
    with pytest.raises(TypeError, match="not supported"):
        tools.register(variadic)
    with pytest.raises(TypeError, match="unsupported parameter type"):
        tools.register(union)
    with pytest.raises(ValueError, match="already registered"):
        tools.register(shell)


def test_record_carries_identity_and_elapsed_time(ws: Path, spill: Path) -> None:
    ticks = iter([10.0, 10.25])
    tools = registry(ws, spill, clock=lambda: next(ticks))
    record = tools.call("read_file", {"path": "notes.txt"}, subtask_id="st-9", attempt=3).call
    assert (record.tool, record.subtask_id, record.attempt) == ("read_file", "st-9", 3)
    assert record.args == {"path": "notes.txt"}
    assert record.elapsed_ms == 250.0


def test_read_file_pages_by_characters(ws: Path, spill: Path) -> None:
    (ws / "long.txt").write_text("0123456789" * 300)
    tools = registry(ws, spill)
    page = tools.call("read_file", {"path": "long.txt", "offset": 5, "limit": 2048})
    assert page.call.content == ("0123456789" * 300)[5:2053]
    assert page.output.endswith(
        "[characters 5–2053 shown; the file continues. "
        "Use read_file(path='long.txt', offset=2053) to read more.]"
    )
    last = tools.call("read_file", {"path": "long.txt", "offset": 2995})
    assert last.output == "56789"
    assert "is a directory" in (tools.call("read_file", {"path": "src"}).call.error or "")


def test_a_read_file_page_is_never_smaller_than_the_floor(ws: Path, spill: Path) -> None:
    """A small model asked for 20 or 40 characters of a config file, never read the line
    it was asked about, and answered from belief: a page holds at least MIN_PAGE."""
    from artoo.actors.tools._builtins import MIN_PAGE

    text = "".join(f"line {i}\n" for i in range(1000))
    (ws / "long.txt").write_text(text)
    page = registry(ws, spill).call("read_file", {"path": "long.txt", "limit": 20})
    assert page.call.content == text[:MIN_PAGE]


def test_line_endings_survive_the_round_trip(ws: Path, spill: Path) -> None:
    (ws / "crlf.txt").write_bytes(b"a\r\nb\rc\n")
    tools = registry(ws, spill)
    read = tools.call("read_file", {"path": "crlf.txt"})
    assert read.output == "a\r\nb\rc\n"
    back = tools.call("load_data", {"filename": "read_file_1.txt"})
    assert back.content == "a\r\nb\rc\n"


# --------------------------------------------------------------------------- properties
@given(text=st.text(max_size=3000), limit=st.integers(min_value=40, max_value=2000))
def test_head_tail_keeps_both_ends_within_the_limit(text: str, limit: int) -> None:
    shown = head_tail(text, limit)
    assert len(shown) <= limit
    if len(text) <= limit:
        assert shown == text
        return
    m = re.search(r"\n… \[(\d+) chars omitted\] …\n", shown)
    assert m is not None
    head, tail = shown[: m.start()], shown[m.end() :]
    assert text.startswith(head) and text.endswith(tail)
    assert len(head) + int(m.group(1)) + len(tail) == len(text)


@settings(max_examples=30, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    text=st.text(
        st.sampled_from("\r\n\té😀") | st.characters(blacklist_categories=["Cs"]),
        min_size=1,
        max_size=400,
    ),
    limit=st.integers(min_value=1, max_value=120),
)
def test_load_data_pages_reassemble_the_file(tmp_path: Path, text: str, limit: int) -> None:
    workspace, spill_dir = tmp_path / "w", tmp_path / "s"
    workspace.mkdir(exist_ok=True)
    spill_dir.mkdir(exist_ok=True)
    (spill_dir / "x_1.txt").write_text(text, encoding="utf-8", newline="")
    tools = ToolRegistry(workspace, spill_dir)
    pages, offset = [], 0
    while offset < len(text):
        outcome = tools.call("load_data", {"filename": "x_1.txt", "offset": offset, "limit": limit})
        chunk = outcome.content[: min(limit, len(text) - offset)]
        pages.append(chunk)
        offset += len(chunk)
    assert "".join(pages) == text


def test_a_zero_shell_timeout_means_the_default(ws: Path, spill: Path) -> None:
    outcome = registry(ws, spill).call("shell", {"command": "echo hi", "timeout_s": 0})
    assert outcome.call.ok and "hi" in outcome.content
