"""The lines a change loses (``artoo.actors.verification._lines``): worked examples — the
whole-file writes a small model made for "append" and "rename" requests, and the edits
that should have been made instead — and properties."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from artoo.actors.roles.executor import losses, lost_lines_refusal, repairs_of
from artoo.actors.tools._observe import line_diff
from artoo.actors.verification._lines import (
    diff_sides,
    lost_lines,
    pair_lines,
    repair_command,
)
from artoo.actors.verification.proof import unchanged
from artoo.schemas import FileEffect, ToolCall

TODO = [
    "TODO: write the README",
    "meeting notes from monday",
    "TODO: fix the release script",
    "ideas: a faster bus",
    "end of notes",
]
APPEND = "append the line 'TODO: call Bob' to notes/todo.txt"
RENAME = "rename the function shout to yell in src/textutil.py"


def _diff(removed: list[str], added: list[str]) -> str:
    return "\n".join([*(f"-{r}" for r in removed), *(f"+{a}" for a in added)])


def test_a_write_of_the_new_line_alone_loses_every_other_line() -> None:
    diff = _diff(TODO, ["TODO: call Bob"])
    assert lost_lines(APPEND, diff) == TODO


def test_an_append_loses_nothing() -> None:
    assert lost_lines(APPEND, "+TODO: call Bob") == []


def test_a_rename_in_place_loses_nothing_and_a_rewrite_loses_the_rest() -> None:
    sed = _diff(["def shout(text: str) -> str:"], ["def yell(text: str) -> str:"])
    assert lost_lines(RENAME, sed) == []
    rewrite = _diff(
        ["def shout(text: str) -> str:", '    return text.upper() + "!"', "def slugify(text):"],
        ["def yell(message): print(message.upper())"],
    )
    assert lost_lines(RENAME, rewrite) == [
        "def shout(text: str) -> str:",
        '    return text.upper() + "!"',
        "def slugify(text):",
    ]


def test_a_value_changed_in_place_loses_nothing() -> None:
    text = "in data/sales.csv change the amount of the west region from 800 to 850"
    assert lost_lines(text, _diff(["west,800"], ["west,850"])) == []


def test_a_line_the_request_removes_is_not_lost() -> None:
    text = "remove the line 'ideas: a faster bus' from notes/todo.txt"
    assert lost_lines(text, "-ideas: a faster bus") == []
    assert lost_lines(text, "-ideas: a faster bus\n-end of notes") == ["end of notes"]


def test_moved_lines_and_blank_lines_are_not_lost() -> None:
    sort = _diff(["b", "a"], ["a", "b"])  # what a sort looks like as a diff
    assert lost_lines("sort the lines of x.txt", sort) == []
    assert lost_lines(APPEND, "-\n-  \n- --- \n+TODO: call Bob") == []


def test_an_unknown_diff_is_none() -> None:
    assert lost_lines(APPEND, None) is None
    assert lost_lines(APPEND, "TODO: no sign") is None
    assert diff_sides("") == ([], [])


def test_losses_reads_only_modified_files_that_lose_lines() -> None:
    lossy = FileEffect(path="notes/todo.txt", change="modified", diff=_diff(TODO, ["x"]))
    kept = FileEffect(path="a.txt", change="modified", diff="+x")
    unknown = FileEffect(path="b.bin", change="modified", diff=None)
    new = FileEffect(path="c.txt", change="created", diff="+x")
    gone = FileEffect(path="d.txt", change="deleted")
    assert losses(APPEND, [kept, unknown, new, gone]) == {}
    assert losses(APPEND, [kept, lossy]) == {"notes/todo.txt": (TODO, [])}
    # the line the request states, written alone over the file: the line to append
    alone = FileEffect(
        path="notes/todo.txt", change="modified", diff=_diff(TODO, ["TODO: call Bob"])
    )
    assert losses(APPEND, [alone]) == {"notes/todo.txt": (TODO, ["TODO: call Bob"])}


def test_the_refusal_names_the_lines_and_how_to_keep_them() -> None:
    told = lost_lines_refusal("notes/todo.txt", TODO)
    assert "5 lines of notes/todo.txt" in told and "'TODO: write the README'" in told
    assert "append them to notes/todo.txt with >>" in told and "sed -i" in told
    assert "\n" not in told
    assert "'the line'" not in told and "s/old/new/" not in told  # nothing to run as it is
    assert "1 line of a.txt" in lost_lines_refusal("a.txt", ["x"])
    # with the new line: the very command that appends it, quoted for the shell
    told = lost_lines_refusal("notes/todo.txt", TODO, ["TODO: call Bob"])
    assert "printf '%s\\n' 'TODO: call Bob' >> notes/todo.txt" in told
    assert "'it'\\''s' >> a.txt" in lost_lines_refusal("a.txt", ["x"], ["it's"])


def _repaired(before: str, request: str, written: str) -> tuple[str | None, str]:
    """The repair of writing ``written`` over a file holding ``before`` (its real diff),
    and what the file holds once the repair has run in a shell (unchanged with none)."""
    diff = line_diff(before.encode(), written.encode())
    sides = None if diff is None else diff_sides(diff)
    command = None if sides is None else repair_command(request, "f.txt", *sides)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "f.txt"
        path.write_text(before, encoding="utf-8")
        if command is not None:
            subprocess.run(command, shell=True, cwd=tmp, check=True, capture_output=True)
        return command, path.read_text(encoding="utf-8")


def test_a_repair_appends_the_line_the_request_states() -> None:
    before = "\n".join(TODO) + "\n"
    command, after = _repaired(before, APPEND, "TODO: call Bob\n")
    assert command == "printf '%s\\n' 'TODO: call Bob' >> notes/todo.txt".replace(
        "notes/todo.txt", "f.txt"
    )
    assert after == before + "TODO: call Bob\n"


def test_a_repair_changes_the_renamed_line_where_it_is() -> None:
    before = (
        "import os\n\n\ndef shout(text: str) -> str:\n    return text.upper()\n"
        "\n\ndef slugify(t):\n    return t\n"
    )
    command, after = _repaired(
        before, RENAME, "def yell(text: str) -> str:\n    return text.upper()\n"
    )
    assert command is not None and command.startswith("python3 -c ")
    assert after == before.replace("def shout(", "def yell(")


def test_a_repair_changes_a_value_in_place_and_keeps_its_indentation() -> None:
    before = "region,amount\nnorth,1200\nwest,800\n"
    request = "in f.txt change the amount of the west region from 800 to 850"
    assert _repaired(before, request, "west,850\n")[1] == "region,amount\nnorth,1200\nwest,850\n"
    code = "class A:\n    LIMIT = 3\n    NAME = 'a'\n"
    assert _repaired(code, "set LIMIT from 3 to 5 in f.txt", "LIMIT = 5\n")[1] == code.replace(
        "3", "5"
    )


def test_no_repair_for_what_the_request_does_not_word() -> None:
    before = "\n".join(TODO) + "\n"
    assert _repaired(before, APPEND, "TODO: call Alice\n") == (None, before)
    # a value changed the other way round is not the request's change
    assert (
        _repaired("west,850\nnorth,1\n", "change west from 800 to 850 in f.txt", "west,800\n")[0]
        is None
    )


def test_a_repair_whose_line_is_gone_writes_nothing() -> None:
    command = repair_command(RENAME, "f.txt", ["def shout(t):", "x = 1"], ["def yell(t):"])
    assert command is not None
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "f.txt").write_text("def other():\n    pass\n")
        done = subprocess.run(command, shell=True, cwd=tmp, capture_output=True)
        assert done.returncode != 0
        assert (Path(tmp) / "f.txt").read_text() == "def other():\n    pass\n"


def test_repairs_of_reads_only_files_that_lose_lines() -> None:
    lossy = FileEffect(path="a.txt", change="modified", diff="-milk\n-eggs\n+butter")
    kept = FileEffect(path="b.txt", change="modified", diff="+butter")
    assert repairs_of("add butter to a.txt and b.txt", [kept, lossy]) == [
        ("a.txt", "printf '%s\\n' butter >> a.txt")
    ]


# --------------------------------------------------------------------------- properties
lines = st.text(alphabet="abcdefgh xyz:-0123", min_size=0, max_size=20)
requests = st.text(alphabet="abcdefgh xyz'", max_size=40)


@given(requests, st.lists(lines, max_size=6))
def test_added_lines_alone_lose_nothing(request: str, added: list[str]) -> None:
    assert lost_lines(request, _diff([], added)) == []


@given(requests, st.lists(lines, max_size=6), st.lists(lines, max_size=6))
def test_lost_lines_are_removed_lines_and_never_ones_added_back(
    request: str, removed: list[str], added: list[str]
) -> None:
    lost = lost_lines(request, _diff(removed, added))
    assert lost is not None
    assert all(line in removed for line in lost)
    for line in lost:  # a line is lost only when it is removed more often than added back
        key = line.strip()
        assert sum(r.strip() == key for r in removed) > sum(a.strip() == key for a in added)


@given(requests, st.lists(lines, max_size=6))
def test_every_removed_line_added_back_loses_nothing(request: str, removed: list[str]) -> None:
    assert lost_lines(request, _diff(removed, list(reversed(removed)))) == []


@given(requests, st.text(alphabet="abcdefgh xyz", max_size=20), st.lists(lines, max_size=6))
def test_more_words_in_the_request_never_lose_more(
    request: str, more: str, removed: list[str]
) -> None:
    diff = _diff(removed, ["zzz"])
    fewer = lost_lines(f"{request} {more}", diff)
    base = lost_lines(request, diff)
    assert fewer is not None and base is not None
    assert set(fewer) <= set(base)


@given(st.lists(lines, max_size=6), st.lists(lines, max_size=6))
def test_an_added_line_keeps_one_removed_line_at_most(removed: list[str], added: list[str]) -> None:
    pairs = pair_lines(removed, added)
    assert [r for r, _ in pairs] == removed
    used = [a for _, a in pairs if a is not None]
    for a in set(used):
        assert used.count(a) <= added.count(a)


# --------------------------------------------------------------------------- unchanged
def _call(tool: str = "write_file", **kw: object) -> ToolCall:
    return ToolCall(tool=tool, args={}, **kw)  # type: ignore[arg-type]


def test_a_change_whose_only_write_was_refused_is_not_done() -> None:
    lossy = _call(
        ok=False,
        refusal="lost_lines",
        effects=(FileEffect(path="notes/todo.txt", change="modified", diff="-a\n+b"),),
    )
    why = unchanged(APPEND, "change", APPEND, [lossy])
    assert why is not None and "refused: lost_lines" in why
    assert unchanged(APPEND, "change", APPEND, []) is not None  # answered, never tried


def test_a_change_made_or_maybe_made_is_done() -> None:
    made = _call(ok=True, effects=(FileEffect(path="notes/todo.txt", change="modified"),))
    already = _call(ok=True)  # write_file: the file already held the text
    unseen = _call("shell", ok=True, exit_code=0, stdout="", sandboxed=False)
    host = _call("my_host_tool", ok=True)
    for calls in ([made], [already], [unseen], [host]):
        assert unchanged(APPEND, "change", APPEND, calls) is None
    # a sandboxed command that changed nothing, or a read, is no change
    looked = _call("shell", ok=True, exit_code=0, stdout="x", sandboxed=True)
    read = _call("read_file", ok=True)
    assert unchanged(APPEND, "change", APPEND, [looked, read]) is not None


def test_only_the_request_itself_as_a_sure_change_is_held_to_it() -> None:
    assert unchanged(APPEND, "change", "read notes/todo.txt first", []) is None  # a step
    question = "how many lines are in notes/todo.txt?"
    assert unchanged(question, "question", question, []) is None
    assert unchanged(APPEND, "", APPEND, []) is None  # no reading from the model: unsure
    create = "create a file status.txt that contains the word ready"
    assert unchanged(create, "creation", create, []) is not None


words = st.sampled_from(["alpha", "beta", "gamma", "delta", "x", "7", "8", "def", "f("])
file_lines = st.lists(words, min_size=1, max_size=4).map(" ".join)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(file_lines, min_size=1, max_size=6, unique=True),
    st.lists(file_lines, min_size=1, max_size=3),
    st.lists(words, max_size=6).map(" ".join),
)
def test_a_repair_never_loses_a_line_and_adds_only_the_requests(
    before: list[str], written: list[str], said: str
) -> None:
    request = f"change f.txt: {said}"
    old = "\n".join(before) + "\n"
    command, after = _repaired(old, request, "\n".join(written) + "\n")
    diff = line_diff(old.encode(), after.encode())
    assert lost_lines(request, diff) == []  # whatever the model wrote, no line is lost
    if command is None:
        assert after == old


def test_a_rewrite_that_makes_up_lines_is_not_repaired() -> None:
    # a small model asked to change west's 800 to 850 kept west,800, added west,850 and
    # made up the other rows: code picks no part of that rewrite
    before = "region,amount\nnorth,1200\nwest,800\nsouth,950\n"
    request = "in f.txt change the amount of the west region from 800 to 850"
    written = "region,amount\nwest,800\neast,1000\nwest,850\nsouth,500\n"
    assert _repaired(before, request, written) == (None, before)
    # a line changed in place not as the request words it: none either
    assert _repaired(before, request, "north,1300\nwest,850\n")[0] is None
