"""The request's own consent to a Law 1 action (``artoo.actors.verification._consent``):
a deletion of a path the reading reads as one to delete and the request names — and
nothing else. Every rule fails closed."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from artoo.actors.verification._consent import request_consent
from artoo.schemas import FileEffect, Target

REMOVE = "Do remove notes/meeting.txt, it is not needed any more"
ENTFERNE = "Lösche notes/meeting.txt bitte"
DELETE = [Target(path="notes/meeting.txt", role="delete")]


def _deleted(path: str) -> FileEffect:
    return FileEffect(path=path, change="deleted", size_before=6)


def test_a_named_deletion_the_reading_asks_for_is_consented_in_any_language() -> None:
    for text in (REMOVE, ENTFERNE):
        assert (
            request_consent(text, DELETE, [_deleted("notes/meeting.txt")])
            == "the request asks to delete notes/meeting.txt"
        )
    assert request_consent(REMOVE, DELETE, [_deleted("./notes//meeting.txt")]) is not None


def test_anything_else_is_the_operators() -> None:
    assert request_consent(REMOVE, [], [_deleted("notes/meeting.txt")]) is None  # not read so
    write = [Target(path="notes/meeting.txt", role="write")]
    assert request_consent(REMOVE, write, [_deleted("notes/meeting.txt")]) is None
    # the reading says delete, but the request's text never names the path
    assert request_consent("tidy up the notes", DELETE, [_deleted("notes/meeting.txt")]) is None
    modified = FileEffect(path="notes/meeting.txt", change="modified", size_before=6)
    assert request_consent(REMOVE, DELETE, [modified]) is None
    other = [_deleted("notes/meeting.txt"), _deleted("notes/todo.txt")]
    assert request_consent(REMOVE, DELETE, other) is None
    hooked = FileEffect(path="notes/meeting.txt", change="deleted", hazard="hook")
    assert request_consent(REMOVE, DELETE, [hooked]) is None
    assert request_consent(REMOVE, DELETE, []) is None
    outside = [Target(path="../x", role="delete")]
    assert request_consent("delete ../x", outside, [_deleted("../x")]) is None


def test_a_new_file_beside_the_deletion_needs_no_consent() -> None:
    new = FileEffect(path="notes/meeting.bak", change="created", size_after=6)
    assert request_consent(REMOVE, DELETE, [_deleted("notes/meeting.txt"), new]) is not None
    assert request_consent(REMOVE, DELETE, [new]) is None  # nothing consented


@given(
    st.lists(
        st.builds(
            FileEffect,
            path=st.sampled_from(["notes/meeting.txt", "a.txt", "../b", "/etc/x"]),
            change=st.sampled_from(["created", "deleted", "modified", "replaced", "metadata"]),
            hazard=st.sampled_from([None, "hook", "executable"]),
        ),
        max_size=4,
    )
)
def test_consent_covers_only_named_deletions_without_hazard(effects: list[FileEffect]) -> None:
    if request_consent(REMOVE, DELETE, effects) is not None:
        for e in effects:
            if e.irreversible:
                assert e.change == "deleted" and e.hazard is None
                assert e.path.endswith("meeting.txt") and not e.path.startswith(("/", "."))
