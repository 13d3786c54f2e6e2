"""A change read back by its effects only when every path the request names was read,
listed or written (``Config.read_back_reads_named``). Real-model bench: "make a copy of
README.md named README.bak" ended ``accept`` on a README.bak holding "Copy of README.md" —
every word of it the request's, so read back by effect — with README.md never read. The
request and files are the tests' own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .helpers import CONFIG, replays_as_before, run_verified, simple_plan

ASK = "make a copy of shop/menu.txt named shop/menu.old"
MENU = "soup 4\nbread 2\n"


def _entries(*calls: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"role": "perceiver", "content": {"intent": "copy the menu", "kind": "creation"}},
        simple_plan(ASK),
        *({"role": "executor", "tool_calls": [c]} for c in calls),
        {"role": "executor", "content": "Done."},
    ]


WRITE_WORDS = {
    "name": "write_file",
    "arguments": {"path": "shop/menu.old", "content": "copy of shop/menu.txt\n"},
}


def test_a_copy_made_of_the_requests_words_is_not_read_back(tmp_path: Path) -> None:
    result, _ = run_verified(tmp_path, _entries(WRITE_WORDS), ASK, files={"shop/menu.txt": MENU})
    assert result.status != "accept" and result.established != "code"


def test_a_copy_of_the_source_it_read_is_read_back(tmp_path: Path) -> None:
    read = {"name": "read_file", "arguments": {"path": "shop/menu.txt"}}
    copy = {"name": "shell", "arguments": {"command": "cp shop/menu.txt shop/menu.old"}}
    result, _ = run_verified(tmp_path, _entries(read, copy), ASK, files={"shop/menu.txt": MENU})
    assert (tmp_path / "workspace/shop/menu.old").read_text() == MENU
    assert result.status != "accept" or result.established == "code"


def test_a_log_from_before_the_field_replays_as_it_ran(tmp_path: Path) -> None:
    off = CONFIG.model_copy(update={"read_back_reads_named": False})
    result, store = run_verified(
        tmp_path, _entries(WRITE_WORDS), ASK, off, files={"shop/menu.txt": MENU}
    )
    assert (result.status, result.established) == ("accept", "code")  # the old hole
    assert replays_as_before(store, "read_back_reads_named") is not None
