"""``FileEffect.diff``: the lines a text file a tool call created or modified lost and
gained, exact or absent — computed for ``write_file``, observed in the sandbox's upper
layer for ``shell`` — what the proof reads back by effect."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import msgspec
import pytest

from artoo.actors.tools import ConfirmationNeeded, Sandbox, ToolRegistry, probe
from artoo.actors.tools._observe import DIFF_CHARS, line_diff, observe, write_effect
from artoo.schemas import FileEffect


# --------------------------------------------------------------------------- the diff
def test_a_diff_lists_the_lines_removed_and_added_with_no_context() -> None:
    assert line_diff(b"a\nb\n", b"a\nb\nport = 8080\n") == "+port = 8080"
    assert line_diff(b"red\ngreen\nred\n", b"blue\ngreen\nred\n") == "-red\n+blue"
    assert line_diff(b"a\nb\nc\n", b"a\nc\n") == "-b"
    assert line_diff(b"", b"hello world\n") == "+hello world"
    assert line_diff(b"x\ny\n", b"y\nz\n") == "-x\n+z"


def test_lines_are_split_at_newlines_only_and_the_last_newline_is_not_a_line() -> None:
    assert line_diff(b"a", b"a\n") == ""  # only the final newline: no line changed
    assert line_diff(b"x", b"xTODO\n") == "-x\n+xTODO"  # appended without a newline first
    assert line_diff(b"a\r\n", b"a\n") == "-a\r\n+a"  # a \r stays in its line
    assert line_diff(b"a\n", b"a\n\n") == "+"  # an empty line added


def test_a_diff_is_exact_or_none() -> None:
    assert line_diff(b"a\n", b"\xff\xfe\n") is None  # not UTF-8
    assert line_diff(b"", b"x\n" * (DIFF_CHARS // 2)) is None  # the diff too long
    kept = b"y" * (DIFF_CHARS - 1)  # a diff of DIFF_CHARS characters is kept whole
    assert line_diff(b"", kept) == "+" + kept.decode()
    assert line_diff(b"", kept + b"y") is None  # one more is not cut: it is dropped
    big = b"line\n" * 60_000  # over 256 KiB: not compared
    assert line_diff(big, big + b"port = 8080\n") is None


def test_write_effect_carries_the_diff() -> None:
    created = write_effect("hello.txt", None, b"hello world\n")
    assert created is not None and created.diff == "+hello world"
    changed = write_effect("settings.ini", b"host = a\n", b"host = a\nport = 8080\n")
    assert changed is not None and changed.diff == "+port = 8080"
    binary = write_effect("blob.bin", None, b"\x00\xff")
    assert binary is not None and binary.diff is None


def test_a_log_from_before_the_field_reads_no_diff() -> None:
    old = b'{"path":"a.txt","change":"modified","kind":"file","summary":"+1 -0 lines"}'
    assert msgspec.json.decode(old, type=FileEffect).diff is None


def test_observe_records_the_diff_of_an_upper_layer(tmp_path: Path) -> None:
    """A hand-made upper layer: a file changed, a text file and a binary one created."""
    lower, upper = tmp_path / "lower", tmp_path / "upper"
    lower.mkdir()
    (lower / "settings.ini").write_text("host = a\n")
    upper.mkdir()
    (upper / "settings.ini").write_text("host = a\nport = 8080\n")
    os.chmod(upper / "settings.ini", stat.S_IMODE(os.stat(lower / "settings.ini").st_mode))
    (upper / "out").mkdir()
    (upper / "out" / "names.txt").write_text("ada\n")
    (upper / "blob.bin").write_bytes(b"\x00\xff\x00")
    observed = observe(upper, lower)
    assert [(e.path, e.change, e.diff) for e in observed.effects] == [
        ("blob.bin", "created", None),
        ("out", "created", None),
        ("out/names.txt", "created", "+ada"),
        ("settings.ini", "modified", "+port = 8080"),
    ]


# --------------------------------------------------------------------------- the tools
def test_write_file_records_the_diff(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "settings.ini").write_text("host = a\n")
    tools = ToolRegistry(ws, tmp_path / "spill", confirm=lambda request: True)
    made = tools.call("write_file", {"path": "hello.txt", "content": "hello world\n"})
    assert made.call.ok and [e.diff for e in made.call.effects] == ["+hello world"]
    changed = tools.call(
        "write_file", {"path": "settings.ini", "content": "host = a\nport = 8080\n"}
    )
    assert changed.call.ok and [e.diff for e in changed.call.effects] == ["+port = 8080"]


@pytest.mark.skipif(sys.platform != "linux", reason="the sandbox needs Linux")
def test_a_sandboxed_command_records_the_diff_it_was_observed_to_make(tmp_path: Path) -> None:
    why = probe()
    if why is not None:
        pytest.skip(f"no sandbox on this machine: {why}")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "colours.txt").write_text("red\ngreen\n")
    asked: list[ConfirmationNeeded] = []

    def approve(request: ConfirmationNeeded) -> bool:
        asked.append(request)
        return True

    tools = ToolRegistry(ws, tmp_path / "spill", confirm=approve, sandbox=Sandbox())
    changed = tools.call("shell", {"command": "sed -i 's/red/blue/' colours.txt"})
    assert changed.call.ok and changed.call.sandboxed, changed.content
    assert [(e.path, e.diff) for e in changed.call.effects] == [("colours.txt", "-red\n+blue")]
    assert asked[0].effects == changed.call.effects  # what the operator saw
    made = tools.call("shell", {"command": "mkdir -p out && printf 'ada\\n' > out/names.txt"})
    assert made.call.ok, made.content
    assert [(e.path, e.kind, e.diff) for e in made.call.effects] == [
        ("out", "dir", None),
        ("out/names.txt", "file", "+ada"),
    ]
    assert (ws / "colours.txt").read_text() == "blue\ngreen\n"
