"""One reading, checked by code (``verification.reading``): the model's structured reading
of a request against the request's own text and the workspace, the stricter reading
winning, and the criteria code writes from it. Nothing reads the request's wording: a
German request is checked as its English twin is."""

from __future__ import annotations

from pathlib import Path

import msgspec
from hypothesis import given
from hypothesis import strategies as st

from artoo.actors.verification.reading import (
    TESTS_SEEN,
    checked,
    criteria_of,
    look,
    named,
    normal_path,
)
from artoo.schemas import TaskSpec


def _spec(text: str, seen: dict[str, bool], **reading: object) -> TaskSpec:
    c = checked(text, seen=seen, **reading)  # type: ignore[arg-type]
    spec = TaskSpec(
        text=text,
        intent=text,
        slug="t",
        kind=c.kind,
        shape=c.shape,
        targets=c.targets,
        values=c.values,
        key=c.key,
        unit=c.unit,
        call=c.call,
        seen=seen,
        notes=c.notes,
    )
    return msgspec.structs.replace(spec, criteria=criteria_of(spec))


def _kinds(spec: TaskSpec) -> list[str]:
    return [c.check.kind for c in spec.criteria if c.check is not None]


def test_a_write_of_a_missing_file_is_a_creation_and_a_create_of_an_existing_one_a_write() -> None:
    seen = {"notes/new.txt": False, "notes/todo.txt": True}
    c = checked(
        "put x in notes/new.txt and notes/todo.txt",
        kind="change",
        targets=[("notes/new.txt", "write"), ("./notes/todo.txt", "create")],
        seen=seen,
    )
    roles = {t.path: t.role for t in c.targets}
    assert roles == {"notes/new.txt": "create", "notes/todo.txt": "write"}
    assert len(c.notes) == 2


def test_targets_outside_the_workspace_or_missing_reads_are_dropped() -> None:
    c = checked(
        "read ../etc/passwd, /etc/hosts and gone.txt",
        kind="question",
        shape="text",
        targets=[("../etc/passwd", "read"), ("/etc/hosts", "read"), ("gone.txt", "read")],
        seen={"gone.txt": False},
    )
    assert c.targets == []
    assert len(c.notes) == 3


def test_a_path_the_request_names_and_the_workspace_holds_is_added_as_read() -> None:
    c = checked(
        "what is the line-length in pyproject.toml?",
        kind="question",
        shape="number",
        seen={"pyproject.toml": True},
    )
    assert [(t.path, t.role) for t in c.targets] == [("pyproject.toml", "read")]


def test_values_keys_and_calls_the_request_does_not_state_are_dropped() -> None:
    c = checked(
        "what does slugify('A b') return in src/text.py?",
        kind="question",
        shape="value",
        values=["A b", "hello"],
        key="version",
        call="slugify('A b', sep='_')",
        seen={"src/text.py": True},
    )
    assert c.values == ["A b"]
    assert c.key == ""
    assert c.call == ""
    good = checked(
        "what does slugify('A b') return in src/text.py?",
        kind="question",
        shape="value",
        call="slugify('A b')",
        seen={"src/text.py": True},
    )
    assert good.call == "slugify('A b')"


def test_a_question_writes_nothing_and_an_unknown_kind_is_mixed() -> None:
    """The stricter reading wins: a question's targets to write are read (a question is
    answered, never turned into a change); a kind outside the vocabulary is ``mixed``."""
    c = checked(
        "what does shout('hi') in src/text.py return?",
        kind="question",
        shape="value",
        targets=[("src/text.py", "write"), ("out.txt", "create")],
        seen={"src/text.py": True, "out.txt": False},
    )
    assert c.kind == "question"
    assert [(t.path, t.role) for t in c.targets] == [("src/text.py", "read")]
    assert checked("x", kind="frobnicate", seen={}).kind == "mixed"


def test_a_kind_outside_the_vocabulary_is_held_to_both_duties() -> None:
    """For a caller of :func:`checked` (a decoded model answer can no longer carry one: its
    kind is an enum), a kind outside the vocabulary, or none, is read as ``mixed`` — the
    stricter reading: it must answer (free text, never proof) and change something."""
    for kind in ("", "frobnicate"):
        spec = _spec("tidy up the notes", {}, kind=kind)
        assert (spec.kind, spec.shape) == ("mixed", "text")
        assert any("read as mixed" in n for n in spec.notes)
        assert _kinds(spec) == ["answered", "changed"]


def test_a_change_with_nothing_to_write_writes_what_the_request_names() -> None:
    c = checked(
        "Set max-complexity to 25 in .flake8",
        kind="change",
        targets=[(".flake8", "read"), ("setup.cfg", "read")],
        values=["25"],
        seen={".flake8": True, "setup.cfg": True},
    )
    assert [(t.path, t.role) for t in c.targets] == [(".flake8", "write"), ("setup.cfg", "read")]
    assert any("nothing to write" in n for n in c.notes)


def test_a_toml_key_question_gets_a_parser_derivation_the_german_twin_the_same() -> None:
    seen = {"pyproject.toml": True}
    english = _spec(
        "what line-length does black use in pyproject.toml?",
        seen,
        kind="question",
        shape="number",
        key="tool.black.line-length",
    )
    german = _spec(
        "Welche line-length nutzt black laut pyproject.toml?",
        seen,
        kind="question",
        shape="number",
        key="tool.black.line-length",
    )
    assert _kinds(english) == _kinds(german) == ["answered", "value_at"]
    (derived,) = [c.check for c in german.criteria if c.check and c.check.kind == "value_at"]
    assert (derived.path, derived.key, derived.shape) == (
        "pyproject.toml",
        "tool.black.line-length",
        "number",
    )


def test_a_count_and_a_call_get_their_code_derivations() -> None:
    count = _spec(
        "Wie viele Zeilen hat notes/todo.txt?",
        {"notes/todo.txt": True},
        kind="question",
        shape="number",
        unit="lines",
    )
    assert _kinds(count) == ["answered", "count_matches"]
    call = _spec(
        "what does slugify('A b') return in src/text.py?",
        {"src/text.py": True},
        kind="question",
        shape="value",
        call="slugify('A b')",
    )
    assert _kinds(call) == ["answered", "evaluates"]


def test_a_change_is_checked_by_its_effect_its_format_its_values_and_the_tests() -> None:
    spec = _spec(
        "set line-length to 100 in pyproject.toml",
        {"pyproject.toml": True, TESTS_SEEN: True},
        kind="change",
        targets=[("pyproject.toml", "write")],
        values=["100"],
        key="line-length",
    )
    assert _kinds(spec) == ["changed", "parses", "reads_back", "tests"]
    back = next(c.check for c in spec.criteria if c.check and c.check.kind == "reads_back")
    assert (back.path, back.key, back.value) == ("pyproject.toml", "line-length", "100")


def test_look_reads_beneath_the_workspace_only(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "b.txt").write_text("x")
    (tmp_path / "out").symlink_to("/etc")
    seen = look(tmp_path, ["a/b.txt", "a/", "a/*.txt", "nope.txt", "out/passwd"], tests=False)
    assert seen == {
        "a/b.txt": True,
        "a/": True,
        "a/*.txt": True,
        "nope.txt": False,
        "out/passwd": False,
        TESTS_SEEN: False,
    }


def test_named_reads_paths_by_their_form() -> None:
    assert named("Ändere pyproject.toml und src/app/ bitte, siehe docs/x.md.") == [
        "pyproject.toml",
        "src/app/",
        "docs/x.md",
    ]


_segment = st.text(st.sampled_from("ab./_-~"), min_size=0, max_size=6)


@given(st.lists(_segment, min_size=1, max_size=5).map("/".join))
def test_a_normal_path_never_leads_out_of_the_workspace(raw: str) -> None:
    path = normal_path(raw)
    if path is not None:
        assert not path.startswith(("/", "~"))
        assert ".." not in path.split("/")


@given(
    st.sampled_from(["question", "change", "creation", "mixed", "x"]),
    st.lists(
        st.tuples(
            st.sampled_from(["a.txt", "b/", "c.toml", "../d"]),
            st.sampled_from(["read", "write", "create", "delete", "?"]),
        ),
        max_size=4,
    ),
    st.dictionaries(st.sampled_from(["a.txt", "b/", "c.toml"]), st.booleans()),
)
def test_checking_a_checked_reading_again_changes_nothing(
    kind: str, targets: list[tuple[str, str]], seen: dict[str, bool]
) -> None:
    text = "look at a.txt b/ c.toml 5"
    once = checked(text, kind=kind, targets=targets, values=["5", "9"], seen=seen)
    twice = checked(
        text,
        kind=once.kind,
        shape=once.shape,
        targets=[(t.path, t.role) for t in once.targets],
        values=once.values,
        seen=seen,
    )
    assert (twice.kind, twice.targets, twice.values) == (once.kind, once.targets, once.values)


def test_a_reading_of_a_retired_policy_is_not_reused() -> None:
    """An episode recorded before policy 1 kept a reading whose criteria use retired check
    kinds: reused, every attempt failed "unknown check kind". It is read again instead."""
    from artoo.actors.roles.perceiver import reading_spec
    from artoo.schemas import POLICY, Megram, Reading

    def episode(policy: int) -> Megram:
        reading = Reading(intent="count", kind="question", shape="number", policy=policy)
        return Megram(
            id="m1",
            level="M",
            created_at=0.0,
            space="intent:x",
            entity="env:local",
            state="accept",
            request="how many lines are in a.txt?",
            reading=reading,
        )

    assert reading_spec(episode(0), "How many lines are in a.txt?") is None
    reused = reading_spec(episode(POLICY), "How many lines are in a.txt?")
    assert reused is not None and reused.reused == "m1"


def test_verify_takes_a_retired_policys_reused_reading_as_logged() -> None:
    from artoo.replay._report import VerifyReport
    from artoo.replay._verify import _readings
    from artoo.schemas import Envelope, TaskRequest

    spec = TaskSpec(text="x", intent="x", slug="x", reused="m-gone")
    envelopes = [
        Envelope(1, 0.0, "t", "queen", None, None, TaskRequest(text="x")),  # policy 0
        Envelope(2, 0.0, "t", "perceiver", None, 1, spec),
    ]
    report = VerifyReport()
    _readings(envelopes, {"t"}, report)
    assert report.ok and report.retired["reading"] == 1 and not report.checked["reading"]


def test_a_value_that_is_the_requests_own_call_is_the_call() -> None:
    """A small model put the call it was asked about among the values (and none as the
    call): code reads it by its form — one Python call of the request's own names."""
    text = "What does `more_itertools.ilen(more_itertools.powerset([1, 2, 3, 4]))` return?"
    c = checked(
        text,
        kind="question",
        shape="number",
        values=["more_itertools.ilen(more_itertools.powerset([1, 2, 3, 4]))"],
        seen={},
    )
    assert c.call == "more_itertools.ilen(more_itertools.powerset([1, 2, 3, 4]))"
    assert c.values == []
