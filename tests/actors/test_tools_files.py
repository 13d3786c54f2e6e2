"""File tools against a hostile workspace: FIFOs, hard links out, huge offsets."""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

import pytest

from artoo.actors.tools import ToolRegistry


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "notes.txt").write_text("hello\n")
    return root


def registry(ws: Path) -> ToolRegistry:
    return ToolRegistry(ws, ws.parent / "spill", confirm=lambda needed: True)


def test_a_fifo_is_refused_at_once_not_read(ws: Path) -> None:
    os.mkfifo(ws / "pipe")  # nobody writes it: a blocking open would hang forever
    for tool, args in (
        ("read_file", {"path": "pipe"}),
        ("write_file", {"path": "pipe", "content": "x"}),
    ):
        call = registry(ws).call(tool, args).call
        assert not call.ok and call.refusal == "unsafe_file"
        assert "not a regular file" in (call.error or "")


def test_a_hard_link_to_a_file_outside_is_neither_read_nor_written(ws: Path) -> None:
    secret = ws.parent / "secret.txt"
    secret.write_text("the outside secret")
    os.link(secret, ws / "hl")
    tools = registry(ws)
    read = tools.call("read_file", {"path": "hl"})
    assert read.call.refusal == "unsafe_file" and "outside secret" not in read.content
    write = tools.call("write_file", {"path": "hl", "content": "overwritten"})
    assert write.call.refusal == "unsafe_file"
    assert secret.read_text() == "the outside secret"


def test_offsets_are_characters_and_a_huge_one_reads_only_a_note(ws: Path) -> None:
    text = "é" * 3_000_000 + "END"  # more than one skip chunk, multi-byte characters
    (ws / "big.txt").write_text(text, encoding="utf-8")
    tools = registry(ws)
    page = tools.call("read_file", {"path": "big.txt", "offset": 3_000_000, "limit": 10})
    assert page.content == "END"
    beyond = tools.call("read_file", {"path": "big.txt", "offset": 790_000_000, "limit": 100})
    assert beyond.call.ok and beyond.content == (
        "[offset 790000000 is past the end of 'big.txt' (3,000,003 characters). "
        "Use read_file(path='big.txt', offset=0) to read it.]"
    )


def _alive_with(marker: str) -> list[int]:
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if marker in cmdline:
                found.append(int(proc.name))
    return found


@pytest.mark.parametrize(
    "command",
    ["sleep 987.125 & echo started", "sleep 987.125 >/dev/null 2>&1 & echo started"],
)
def test_a_background_process_does_not_outlive_the_call(ws: Path, command: str) -> None:
    outcome = registry(ws).call("shell", {"command": command})
    assert outcome.call.ok and "started" in outcome.content
    deadline = time.monotonic() + 5  # SIGKILL was sent; the kernel needs a moment
    while _alive_with("987.125") and time.monotonic() < deadline:
        time.sleep(0.01)
    assert _alive_with("987.125") == []


def test_old_task_spill_directories_are_cleaned_and_recent_ones_kept(tmp_path: Path) -> None:
    from artoo.actors.tools import cleanup_spill

    root = tmp_path / "spill"
    for name, age_days in (("old-task", 9), ("new-task", 1)):
        (root / name).mkdir(parents=True)
        (root / name / "shell_1.txt").write_text("x")
        stamp = 1_700_000_000 - age_days * 86_400
        os.utime(root / name, (stamp, stamp))
    legacy = root / "shell_7.txt"
    legacy.write_text("from before per-task directories")
    os.utime(legacy, (1_700_000_000 - 30 * 86_400,) * 2)
    assert cleanup_spill(root, keep_s=7 * 86_400, now=1_700_000_000) == 2
    assert [p.name for p in root.iterdir()] == ["new-task"]


def test_a_registry_lists_only_its_own_task_spill_directory(ws: Path) -> None:
    crowded = ws.parent / "spill" / "other-task"
    crowded.mkdir(parents=True)
    for i in range(50):
        (crowded / f"shell_{i + 100}.txt").write_text("x")
    mine = ToolRegistry(ws, ws.parent / "spill" / "my-task")
    outcome = mine.call("shell", {"command": "echo hi"})
    assert outcome.call.ok
    assert [p.name for p in (ws.parent / "spill" / "my-task").iterdir()] == ["shell_1.txt"]


def test_the_context_and_spill_limits_are_the_registrys(ws: Path) -> None:
    (ws / "big.txt").write_text("x" * 5000)
    tools = ToolRegistry(ws, ws.parent / "spill", context_limit=300, spill_limit=2000)
    outcome = tools.call("shell", {"command": "cat big.txt"})
    assert len(outcome.call.output_preview) <= 400 < len(outcome.output)
    assert outcome.call.spill_ref is not None  # over 2,000 characters: a load_data pointer
    page = tools.call("load_data", {"filename": outcome.call.spill_ref, "limit": 10_000})
    assert "limit cut to 2000 characters" in page.content


def test_a_directory_swapped_for_a_symlink_during_1000_calls_never_leaks(ws: Path) -> None:
    import threading

    outside = ws.parent / "outside"
    outside.mkdir()
    (outside / "file.txt").write_text("the outside secret")
    inside = ws / "d"
    inside.mkdir()
    (inside / "file.txt").write_text("inside")
    stop = threading.Event()

    def swap() -> None:  # d is a real directory, then a symlink out, then real again …
        while not stop.is_set():
            with contextlib.suppress(OSError):
                inside.rename(ws / "d_real")
                inside.symlink_to(outside)
                inside.unlink()
                (ws / "d_real").rename(inside)

    tools = registry(ws)
    swapper = threading.Thread(target=swap, daemon=True)
    swapper.start()
    try:
        contents = []
        for i in range(500):
            contents.append(tools.call("read_file", {"path": "d/file.txt"}).content)
            tools.call("write_file", {"path": "d/file.txt", "content": f"written {i}"})
    finally:
        stop.set()
        swapper.join(5)
    if (ws / "d_real").exists() and not inside.exists():
        (ws / "d_real").rename(inside)
    assert not any("outside secret" in c for c in contents)
    assert (outside / "file.txt").read_text() == "the outside secret"
    assert sorted(p.name for p in outside.iterdir()) == ["file.txt"]
