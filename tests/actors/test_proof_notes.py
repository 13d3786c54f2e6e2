"""A tool's own note backs no value: the proof and grounding read what the workspace gave
(``ToolCall.content``), not the words a built-in tool adds around it.

Seen on a real model: an ``awk`` summing a column that does not exist printed 0; asked
for a second derivation, a fresh conversation called ``read_file`` with ``offset=1024``
on a 54-character file and got artoo's own note "[offset 1024 is past the end of … Use
read_file(path=…, offset=0) to read it.]" — its ``offset=0`` "backed" the wrong 0 a
second time and the task ended ``accept``. The tool calls here are made by the real
registry on a workspace of the test's own, as the log records them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from artoo.actors.tools import ToolRegistry
from artoo.actors.verification.grounding import tool_outputs
from artoo.actors.verification.ladder import ungrounded
from artoo.actors.verification.proof import derivations
from artoo.schemas import ToolCall

from .proof_helpers import settle
from .proof_helpers import shell_call as _shell

CRATES = "crate,weight\nA,12\nB,31\nC,7\nD,44\nE,5\nF,19\n"
TOTAL = "what is the total of the weight column in yard/crates.csv?"


@pytest.fixture
def tools(tmp_path: Path) -> ToolRegistry:
    ws = tmp_path / "ws"
    (ws / "yard" / "bins").mkdir(parents=True)
    (ws / "yard" / "crates.csv").write_text(CRATES)
    for name in ("a.txt", "b.txt", "c.txt"):
        (ws / "yard" / "bins" / name).write_text(name)
    return ToolRegistry(ws, tmp_path / "spill")


def _call(tools: ToolRegistry, name: str, **args: object) -> ToolCall:
    outcome = tools.call(name, dict(args))
    assert outcome.call.ok, outcome.call.error
    return outcome.call


def test_a_read_past_the_end_backs_nothing(tools: ToolRegistry) -> None:
    """The note of a read past the end names the offset asked (1024), the file's length
    (its character count) and ``offset=0``: none of them is a value the file holds."""
    past = _call(tools, "read_file", path="yard/crates.csv", offset=1024)
    assert "past the end" in past.output_preview  # the model is still told where the end is
    assert past.content == ""
    assert tool_outputs([past], strict=True) == []
    for figure in ("0", "1024", str(len(CRATES))):
        assert derivations(figure, [past], TOTAL) == 0, figure
    # the class end to end in the proof: one awk's wrong 0 and a read past the end
    awk = _shell("awk -F, '{s += $6} END {print s}' yard/crates.csv", "0\n")
    wrong = "The total of the weight column in yard/crates.csv is 0."
    assert derivations("0", [awk, past], TOTAL) == 1
    assert settle(TOTAL, "question", wrong, [awk, past]) == "model"


def test_a_paged_reads_note_backs_nothing_and_its_page_backs_what_it_holds(
    tools: ToolRegistry,
) -> None:
    """A page of 27 characters ends on "[characters 0–27 shown; … offset=27 …]": neither
    0 nor 27 is in the file. The page itself still backs its figures, and a sum of its
    column."""
    page = _call(tools, "read_file", path="yard/crates.csv", limit=27)
    assert "offset=27" in page.output_preview
    assert page.content == CRATES[:27]
    for figure in ("0", "27"):
        assert derivations(figure, [page], TOTAL) == 0, figure
    assert derivations("31", [page], TOTAL) == 1  # printed on the page
    assert derivations("50", [page], TOTAL) == 1  # 12 + 31 + 7: the page's column
    whole = _call(tools, "read_file", path="yard/crates.csv")
    assert whole.content == whole.output_preview == CRATES  # no note: the same text
    assert derivations("118", [whole], TOTAL) == 1


def test_a_saved_results_page_note_backs_nothing(tools: ToolRegistry) -> None:
    """``load_data``'s own note ("[characters 0–40 of N shown. Use load_data(…, offset=40)
    …]") names offsets, not figures of the result read back."""
    saved = tools.call("shell", {"command": "seq 1000 1999"}).call
    assert saved.spill_ref is None  # a result shown in part, saved in full
    spilled = sorted(p.name for p in tools.spill_dir.iterdir())
    page = _call(tools, "load_data", filename=spilled[-1], limit=40)
    assert "offset=40" in page.output_preview
    assert page.content is not None and "offset=" not in page.content
    assert derivations("40", [page], "what does the saved result say?") == 0


def test_a_globs_count_line_is_no_line_of_the_listing(tools: ToolRegistry) -> None:
    """The glob's "3 match(es):" heads its paths: counted as a line it made 4 lines of a
    3-path listing — a listing backs its line count, so 4 was "backed"."""
    listing = _call(tools, "glob", pattern="yard/bins/*.txt")
    assert listing.output_preview.startswith("3 match(es):")
    assert listing.content == "yard/bins/a.txt\nyard/bins/b.txt\nyard/bins/c.txt"
    asked = "how many text files are in yard/bins?"
    assert derivations("3", [listing], asked) == 1
    assert derivations("4", [listing], asked) == 0


def test_grounding_reads_no_note_either(tools: ToolRegistry) -> None:
    """The validators' grounding of a question's answer reads the same field: a read past
    the end grounds no 0."""
    past = _call(tools, "read_file", path="yard/crates.csv", offset=1024)
    answer = "The total of the weight column in yard/crates.csv is 0."
    weak = ungrounded(answer, [past], request=TOTAL, kind="question")
    assert weak is not None and weak.ungrounded == ("0",)


def test_a_call_logged_before_the_field_reads_as_it_did() -> None:
    """A log older than ``ToolCall.content`` decides exactly as it did: what the model was
    shown, notes and all (``replay --verify`` of it stays clean)."""
    shown = "[offset 1024 is past the end of 'yard/crates.csv' (42 characters). Use ok, offset=0]"
    args = {"path": "yard/crates.csv", "offset": 1024}
    old = ToolCall(tool="read_file", args=args, target="yard/crates.csv", output_preview=shown)
    assert old.content is None
    assert tool_outputs([old], strict=True) == [shown]
    assert derivations("0", [old], TOTAL) == 1


def test_the_cut_of_a_long_record_states_no_figure(tmp_path: Path) -> None:
    """A long stream or page is recorded head and tail; the cut's "[330 chars omitted]"
    would back 330 as a figure the command printed. The record marks the cut with no
    figure; what the model was shown still says how much was left out."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "ids.txt").write_text("".join(f"{n}\n" for n in range(1000, 1101)))
    tools = ToolRegistry(ws, tmp_path / "spill", context_limit=200)
    run = _call(tools, "shell", command="seq 1000 1100")
    read = _call(tools, "read_file", path="ids.txt")
    asked = "what does ids.txt list?"
    for call, record in ((run, run.stdout), (read, read.content)):
        assert record is not None and "\n… [chars omitted] …\n" in record
        assert len(record) <= 200
        omitted = re.search(r"\[(\d+) chars omitted\]", call.output_preview)
        assert omitted is not None
        assert derivations(omitted.group(1), [call], asked) == 0
