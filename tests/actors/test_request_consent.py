"""The request's own consent to a Law 1 action (``artoo.actors.verification._consent``):
a deletion the reading names (a ``delete`` target) and the request spells out is
consented; nothing else is — the request's wording is never read for intent. Worked
examples and properties: every rule fails closed."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from artoo.actors.law1 import Scope, reversible
from artoo.actors.verification._consent import names_literally, request_consent
from artoo.schemas import FileEffect, Target


def _deleted(path: str, kind: str = "file") -> FileEffect:
    return FileEffect(path=path, change="deleted", kind=kind, size_before=6)  # type: ignore[arg-type]


def _modified(path: str, before: str = "") -> FileEffect:
    return FileEffect(path=path, change="modified", size_before=10, size_after=14, before=before)


def _delete(path: str) -> Target:
    return Target(path=path, role="delete")


REMOVE = "Do remove notes/meeting.txt, it is not needed any more"
MEETING = [_delete("notes/meeting.txt")]


# --------------------------------------------------------------------------- worked examples
def test_a_deletion_the_reading_names_and_the_request_spells_is_consented() -> None:
    assert (
        request_consent(REMOVE, MEETING, [_deleted("notes/meeting.txt")])
        == "the request asks to delete notes/meeting.txt"
    )
    # any language: the reading decides, the text only has to spell the path
    german = "Lösche bitte notes/meeting.txt"
    assert request_consent(german, MEETING, [_deleted("notes/meeting.txt")]) is not None


def test_a_deletion_the_reading_does_not_name_is_not_consented() -> None:
    # the request's words ask to remove it, but the reading has no delete target
    assert request_consent(REMOVE, [], [_deleted("notes/meeting.txt")]) is None
    as_write = [Target(path="notes/meeting.txt", role="write")]
    assert request_consent(REMOVE, as_write, [_deleted("notes/meeting.txt")]) is None
    # the reading names another file
    assert request_consent(REMOVE, MEETING, [_deleted("notes/todo.txt")]) is None


def test_a_delete_target_the_request_does_not_spell_is_not_consented() -> None:
    text = "tidy up the notes"
    assert request_consent(text, MEETING, [_deleted("notes/meeting.txt")]) is None
    # spelled only inside a longer path: not this one
    longer = "remove notes/meeting.txt.bak"
    assert request_consent(longer, MEETING, [_deleted("notes/meeting.txt")]) is None


def test_a_directory_named_for_deletion_covers_what_is_beneath_it() -> None:
    text = "delete the build/ folder"
    tree = [_deleted("build", "dir"), _deleted("build/a.o"), _deleted("build/sub", "dir")]
    reason = request_consent(text, [_delete("build/")], tree)
    assert reason == "the request asks to delete build"
    assert request_consent(text, [_delete("build/")], [*tree, _deleted("src/a.c")]) is None


def test_only_deletions_are_consented() -> None:
    text = "change notes/todo.txt"
    targets = [_delete("notes/todo.txt"), Target(path="notes/todo.txt", role="write")]
    # a modification the reading names but whose image was not kept: the operator's
    assert request_consent(text, targets, [_modified("notes/todo.txt")]) is None
    replaced = FileEffect(path="notes/todo.txt", change="replaced", size_before=40)
    assert request_consent(text, targets, [replaced]) is None
    meta = FileEffect(path="notes/todo.txt", change="metadata")
    assert request_consent(text, targets, [meta]) is None


def test_planted_code_is_never_consented() -> None:
    text = "remove .git/hooks/pre-commit"
    hook = FileEffect(path=".git/hooks/pre-commit", change="deleted", hazard="hook")
    assert request_consent(text, [_delete(".git/hooks/pre-commit")], [hook]) is None


def test_reversible_changes_and_new_paths_need_no_consent_and_are_passed_over() -> None:
    text = "replace notes/todo.txt's first line, remove notes/meeting.txt, write out/a.txt"
    targets = [
        Target(path="notes/todo.txt", role="write"),
        Target(path="out/", role="create"),
        *MEETING,
    ]
    kept = _modified("notes/todo.txt", before="a" * 64)
    made = FileEffect(path="out/a.txt", change="created")
    found = [kept, made, _deleted("notes/meeting.txt")]
    assert request_consent(text, targets, found) == "the request asks to delete notes/meeting.txt"
    # but those alone ask nothing, so there is nothing to consent to
    assert request_consent(text, targets, [kept, made]) is None
    assert request_consent(text, targets, []) is None  # a parser decision: nothing observed
    # with no targets (an older reading) a new path is passed over as before
    scratch = FileEffect(path="scratch.txt", change="created")
    assert request_consent(text, [], [scratch]) is None


def test_a_call_with_an_effect_outside_the_targets_is_never_consented() -> None:
    """The scope gate asked about the stray file: the deletion beside it does not carry it."""
    stray = FileEffect(path="elsewhere.txt", change="created")
    found = [_deleted("notes/meeting.txt"), stray]
    assert request_consent(REMOVE, MEETING, found) is None
    assert request_consent(REMOVE, MEETING, found[:1]) is not None


def test_paths_compare_normalised_and_never_leave_the_workspace() -> None:
    text = "remove notes/meeting.txt"
    assert request_consent(text, MEETING, [_deleted("./notes//meeting.txt")]) is not None
    assert request_consent(text, MEETING, [_deleted("/notes/meeting.txt")]) is None
    assert request_consent(text, [_delete("../x")], [_deleted("../x")]) is None


def test_names_literally_reads_whole_paths() -> None:
    assert names_literally("rm notes/a.txt.", "notes/a.txt")  # sentence end
    assert names_literally("rm 'notes/a.txt'", "notes/a.txt")
    assert names_literally("delete out/ now", "out/")
    assert not names_literally("rm notes/a.txt2", "notes/a.txt")
    assert not names_literally("rm my-notes/a.txt", "notes/a.txt")
    assert not names_literally("rm notes/a.txt/b", "notes/a.txt")
    assert not names_literally("anything", "/etc/passwd")


# --------------------------------------------------------------------------- properties
_PATHS = ["a.txt", "b.txt", "notes/todo.txt", "out", "out/x.txt", "d.txt"]
_WORDS = ["remove", "delete", "please", "the", "and", "change", "keep", "?", "."]
texts = st.lists(st.sampled_from(_PATHS + _WORDS), max_size=10).map(" ".join)
roles = st.sampled_from(["read", "write", "create", "delete"])
targets = st.lists(
    st.builds(Target, path=st.sampled_from([*_PATHS, "out/"]), role=roles), max_size=4
)
kinds = st.sampled_from(["", "question", "change", "creation"])
one_effect = st.builds(
    FileEffect,
    path=st.sampled_from([*_PATHS, "./a.txt", "/a.txt", "../a.txt"]),
    change=st.sampled_from(["created", "deleted", "modified", "replaced", "metadata"]),
    hazard=st.one_of(st.none(), st.sampled_from(["executable", "hook"])),
    before=st.sampled_from(["", "b" * 64]),
)
effect_lists = st.lists(one_effect, max_size=5)


@given(texts, targets, effect_lists, kinds)
def test_consent_holds_only_for_spelled_deletions_the_reading_names(
    text: str, named: list[Target], found: list[FileEffect], kind: str
) -> None:
    reason = request_consent(text, named, found, kind=kind)
    if reason is None:
        return
    scope = Scope(kind, tuple(named))
    asked = [e for e in found if e.irreversible and not reversible(e, scope)]
    assert asked and "\n" not in reason
    deletes = [t.path.rstrip("/") for t in named if t.role == "delete"]
    for effect in asked:
        path = effect.path.removeprefix("./").replace("//", "/")
        assert effect.change == "deleted" and effect.hazard is None
        top = next(d for d in deletes if path == d or path.startswith(d + "/"))
        assert names_literally(text, top)


@given(texts, targets, st.lists(one_effect, min_size=1, max_size=5), one_effect, st.integers(0, 5))
def test_adding_an_effect_never_turns_none_into_consent(
    text: str, named: list[Target], found: list[FileEffect], extra: FileEffect, at: int
) -> None:
    if request_consent(text, named, found) is None and any(e.irreversible for e in found):
        more = [*found[:at], extra, *found[at:]]
        assert request_consent(text, named, more) is None


@given(texts, st.lists(st.builds(Target, path=st.sampled_from(_PATHS), role=roles)), effect_lists)
def test_without_a_delete_target_nothing_is_consented(
    text: str, named: list[Target], found: list[FileEffect]
) -> None:
    named = [t for t in named if t.role != "delete"]
    assert request_consent(text, named, found) is None
