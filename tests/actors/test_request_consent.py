"""The request's own consent to a Law 1 action (``artoo.actors.verification._consent``):
worked examples (the requests a real small model was denied headless) and properties —
every rule fails closed."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from artoo.actors.verification._consent import asks_removal, request_consent
from artoo.actors.verification._lines import lost_lines
from artoo.actors.verification.request import request_paths
from artoo.schemas import FileEffect


def _modified(path: str, diff: str | None = "+x") -> FileEffect:
    """A change of ``path``: by default one line added, none lost."""
    return FileEffect(path=path, change="modified", size_before=10, size_after=14, diff=diff)


def _deleted(path: str) -> FileEffect:
    return FileEffect(path=path, change="deleted", size_before=6)


# --------------------------------------------------------------------------- worked examples

APPEND = "append the line 'TODO: call Bob' to notes/todo.txt"
REMOVE = "Do remove notes/meeting.txt, it is not needed any more"
STATUS = "create a file status.txt that contains the word ready"
NAMES = "Create out/names.txt listing the names in people.csv"
SALES = "in data/sales.csv change the amount of the west region from 800 to 850"


def test_the_five_requests_denied_headless_consent_to_their_own_effect() -> None:
    assert (
        request_consent(APPEND, "change", [_modified("notes/todo.txt")])
        == "the request names notes/todo.txt as what it changes"
    )
    assert request_consent(REMOVE, "change", [_deleted("notes/meeting.txt")]) is not None
    # the task wrote status.txt, then wrote it again on a retry: the overwrite is consented
    assert request_consent(STATUS, "creation", [_modified("status.txt")]) is not None
    assert request_consent(NAMES, "creation", [_modified("out/names.txt")]) is not None
    replaced = FileEffect(path="data/sales.csv", change="replaced", size_before=40)
    assert request_consent(SALES, "change", [replaced]) is not None


def test_paths_compare_normalised() -> None:
    assert request_consent(APPEND, "change", [_modified("./notes//todo.txt")]) is not None
    assert (
        request_consent("append x to notes/todo.txt", "change", [_modified("/notes/todo.txt")])
        is None
    )
    assert (
        request_consent("append x to notes/todo.txt", "change", [_modified("../notes/todo.txt")])
        is None
    )


def test_a_question_never_consents() -> None:
    question = "how many lines are in notes/meeting.txt?"
    for kind in ("question", "change", "creation", ""):
        assert request_consent(question, kind, [_deleted("notes/meeting.txt")]) is None
        assert request_consent(question, kind, [_modified("notes/meeting.txt")]) is None


def test_an_effect_on_a_path_the_request_does_not_name_is_not_consented() -> None:
    text = "append the line 'x' to a.txt"
    assert request_consent(text, "change", [_modified("a.txt")]) is not None
    assert request_consent(text, "change", [_modified("b.txt")]) is None
    assert request_consent(text, "change", [_modified("a.txt"), _modified("b.txt")]) is None
    # a path under a named directory is not the path named
    assert request_consent("tidy up notes/", "change", [_modified("notes/a.txt")]) is None


def test_an_unsure_or_missing_reading_never_consents() -> None:
    for kind in ("", "unknown", "question", "something"):
        assert request_consent(APPEND, kind, [_modified("notes/todo.txt")]) is None
    # code sees a question (a question word first) where the model read a change: unsure
    text = "what a mess: remove notes/meeting.txt"
    assert request_consent(text, "change", [_deleted("notes/meeting.txt")]) is None


def test_a_deletion_needs_a_request_to_remove() -> None:
    assert request_consent(APPEND, "change", [_deleted("notes/todo.txt")]) is None
    for text in (
        "delete notes/todo.txt",
        "Please REMOVE notes/todo.txt",
        "erase notes/todo.txt now",
        "rm notes/todo.txt",
        "get rid of notes/todo.txt",
        "Get  rid of notes/todo.txt",
        "discard notes/todo.txt",
    ):
        assert request_consent(text, "change", [_deleted("notes/todo.txt")]) is not None, text
    # not a whole word: no removal asked
    assert not asks_removal("the removed lines of notes/todo.txt")
    assert not asks_removal("a remover, a deleter, an eraser, a farm")


def test_no_effects_metadata_or_a_hazard_is_never_consented() -> None:
    assert request_consent(APPEND, "change", []) is None  # a parser decision: nothing observed
    meta = FileEffect(path="notes/todo.txt", change="metadata", summary="mode 644 -> 755")
    assert request_consent(APPEND, "change", [meta]) is None
    planted = FileEffect(path="notes/todo.txt", change="modified", hazard="executable")
    assert request_consent(APPEND, "change", [planted]) is None
    created = FileEffect(path="notes/todo.txt", change="created", hazard="startup")
    assert request_consent(APPEND, "change", [created]) is None


def test_a_new_scratch_file_beside_a_named_change_needs_no_consent() -> None:
    """A new path with no hazard is one Law 1 never asks of: passed over, so a command
    that rewrites the named file and leaves a new file beside it is consented — but a
    new file alone is nothing to consent to, and a hazard is never consented."""
    scratch = FileEffect(path="notes/todo.txt.bak", change="created", size_after=10)
    assert request_consent(APPEND, "change", [_modified("notes/todo.txt"), scratch]) == (
        "the request names notes/todo.txt as what it changes"
    )
    assert request_consent(APPEND, "change", [scratch]) is None
    hook = FileEffect(path="notes/run.sh", change="created", hazard="executable")
    assert request_consent(APPEND, "change", [_modified("notes/todo.txt"), hook]) is None


def test_the_reason_names_each_path_once() -> None:
    text = "change a.txt and b.txt"
    found = [_modified("a.txt"), _modified("b.txt"), _modified("./a.txt")]
    assert (
        request_consent(text, "change", found)
        == "the request names a.txt, b.txt as what it changes"
    )


# --------------------------------------------------------------------------- properties

_PATHS = ["a.txt", "b.txt", "notes/todo.txt", "./notes/todo.txt", "data/x.csv", "out/", "c.md"]
_WORDS = ["append", "to", "change", "delete", "remove", "get rid of", "the", "line", "please"]
_WORDS += ["create", "in", "how", "what", "many", "and", "rm", "is", "Do", ",", "."]

_VERBS = ["append a line to", "change", "delete", "remove", "update", "get rid of", "fix"]
_NAMED = ["a.txt", "b.txt", "notes/todo.txt", "data/x.csv"]

asks = st.tuples(
    st.sampled_from(_VERBS), st.lists(st.sampled_from(_NAMED), min_size=1, max_size=3)
).map(lambda t: f"{t[0]} {' and '.join(t[1])}")
"""Requests that ask to change (or remove) the paths they name."""
texts = st.one_of(st.lists(st.sampled_from(_PATHS + _WORDS), max_size=12).map(" ".join), asks)
kinds = st.sampled_from(["", "question", "change", "creation", "unknown"])
one_effect = st.builds(
    FileEffect,
    path=st.sampled_from([*_PATHS, "notes//todo.txt", "/a.txt", "../a.txt", "d.txt"]),
    change=st.sampled_from(["created", "deleted", "modified", "replaced", "metadata"]),
    hazard=st.one_of(st.none(), st.sampled_from(["executable", "hook", "startup"])),
)
effect_lists = st.lists(one_effect, max_size=5)


@given(texts, kinds, effect_lists)
def test_consent_holds_only_for_named_plain_changes(
    text: str, kind: str, found: list[FileEffect]
) -> None:
    named = {p.rstrip("/") for p in request_paths(text)}
    reason = request_consent(text, kind, found)
    if reason is not None:
        assert found and "\n" not in reason
        assert any(e.irreversible for e in found)
        for effect in (e for e in found if e.irreversible):
            assert effect.path.removeprefix("./").replace("//", "/") in named
            assert effect.hazard is None and effect.change in ("modified", "replaced", "deleted")
            assert effect.change != "deleted" or asks_removal(text)


@given(texts, kinds, effect_lists, st.sampled_from(["d.txt", "e/f.txt", "zz.py"]))
def test_a_path_not_named_in_the_text_is_never_consented(
    text: str, kind: str, found: list[FileEffect], other: str
) -> None:
    stranger = FileEffect(path=other, change="modified")
    text = text.replace(other, "")
    assert other not in request_paths(text)
    assert request_consent(text, kind, [*found, stranger]) is None


@given(texts, kinds, effect_lists)
def test_a_question_is_never_consented(text: str, kind: str, found: list[FileEffect]) -> None:
    assert request_consent(text + "?", kind, found) is None


@given(texts, kinds, st.lists(one_effect, min_size=1, max_size=5), one_effect, st.integers(0, 5))
def test_adding_an_effect_never_turns_none_into_consent(
    text: str, kind: str, found: list[FileEffect], extra: FileEffect, at: int
) -> None:
    if request_consent(text, kind, found) is None and any(e.irreversible for e in found):
        more = [*found[:at], extra, *found[at:]]
        assert request_consent(text, kind, more) is None


@given(texts, effect_lists)
def test_only_a_sure_change_or_creation_consents(text: str, found: list[FileEffect]) -> None:
    for kind in ("", "question", "unknown", "change?"):
        assert request_consent(text, kind, found) is None


@given(
    asks,
    st.sampled_from(["change", "creation"]),
    st.lists(
        st.builds(
            FileEffect,
            path=st.sampled_from(_NAMED),
            change=st.sampled_from(["modified", "replaced", "deleted"]),
            diff=st.sampled_from([None, "+x", "-TODO: keep me\n+x", "-old line\n+old lines"]),
        ),
        min_size=1,
        max_size=4,
    ),
)
def test_a_change_request_consents_to_plain_changes_of_what_it_names(
    text: str, kind: str, found: list[FileEffect]
) -> None:
    named = set(request_paths(text))
    expected = (
        all(e.path in named for e in found)
        and (asks_removal(text) or all(e.change != "deleted" for e in found))
        and all(e.change != "modified" or lost_lines(text, e.diff) == [] for e in found)
    )
    assert (request_consent(text, kind, found) is not None) == expected


def test_a_file_the_task_created_may_be_rewritten_whole() -> None:
    """A value written wrong to a new file, then right: the rewrite loses the task's own
    line, not the workspace's — consented when the subtask's calls created the file, and
    only then; never for a file the request does not name."""
    text = "count the TODO lines in notes/todo.txt and write the count to n.txt"
    rewrite = _modified("n.txt", "-3\n+2")
    assert request_consent(text, "creation", [rewrite]) is None  # its line "3" is lost
    assert request_consent(text, "creation", [rewrite], created=["n.txt"]) is not None
    assert request_consent(text, "creation", [rewrite], created=["./n.txt"]) is not None
    other = _modified("notes/todo.txt", "-call bob\n+2")
    assert request_consent(text, "creation", [other], created=["n.txt"]) is None
    unnamed = _modified("m.txt", "-3\n+2")
    assert request_consent(text, "creation", [unnamed], created=["m.txt"]) is None


# --------------------------------------------------------------------------- consent_reads_back


def test_with_read_back_only_the_change_the_request_words_is_consented() -> None:
    sales = "region,amount\nnorth,1200\nwest,800\nsouth,950"
    made_up = (
        "-" + "\n-".join(sales.split("\n")) + "\n+Region,Amount\n+North,800\n+South,900\n+West,850"
    )
    rewrite = _modified("data/sales.csv", made_up)
    assert lost_lines(SALES, rewrite.diff) == []  # every row "changed in place": none lost
    assert request_consent(SALES, "change", [rewrite]) is not None  # as before
    assert request_consent(SALES, "change", [rewrite], read_back=True) is None
    right = _modified("data/sales.csv", "-west,800\n+west,850")
    assert request_consent(SALES, "change", [right], read_back=True) is not None
    append = _modified("notes/todo.txt", "+TODO: call Bob")
    assert request_consent(APPEND, "change", [append], read_back=True) is not None
    rename = "rename the function shout to yell in src/textutil.py"
    renamed = _modified(
        "src/textutil.py", "-def shout(text: str) -> str:\n+def yell(text: str) -> str:"
    )
    assert request_consent(rename, "change", [renamed], read_back=True) is not None
    # a question read as a change ran sed -i 's/ /-/g' over the file it asks about
    ask = "name the function in src/textutil.py that joins words with dashes"
    dashed = _modified(
        "src/textutil.py", "-def slugify(text: str) -> str:\n+def-slugify(text:-str)-->-str:"
    )
    assert request_consent(ask, "change", [dashed]) is not None
    assert request_consent(ask, "change", [dashed], read_back=True) is None
    # a file the task created is its own; an unknown diff is never read back
    assert request_consent(SALES, "change", [rewrite], read_back=True, created=["data/sales.csv"])
    assert (
        request_consent(SALES, "change", [_modified("data/sales.csv", None)], read_back=True)
        is None
    )


@given(texts, kinds, effect_lists)
def test_read_back_only_ever_takes_consent_away(
    text: str, kind: str, found: list[FileEffect]
) -> None:
    if request_consent(text, kind, found, read_back=True) is not None:
        assert request_consent(text, kind, found) is not None
