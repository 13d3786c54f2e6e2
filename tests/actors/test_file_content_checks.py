"""file_contains / file_matches: a written file's content decided by code, read beneath the
workspace (no symlink followed), and validated as plan checks."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from artoo.actors.verification.checks import check_problem, evaluate, reads_workspace
from artoo.actors.verification.ladder import rule_verdict
from artoo.schemas import Check, Criterion, ToolCall


def _run(ws: Path, kind: str, path: str, value: object) -> tuple[bool, str, str | None]:
    res = evaluate(Check(kind=kind, path=path, value=value), output="", exit_code=0, workspace=ws)
    return res.passed, res.evidence, res.failure_class


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "hello.txt").write_text("hello\n")
    (tmp_path / "notes.md").write_text("# Notes\nTODO: ship it\n")
    return tmp_path


def test_file_contains_reads_the_file_not_the_output(ws: Path) -> None:
    assert _run(ws, "file_contains", "out/hello.txt", "hello")[0]
    passed, evidence, fclass = _run(ws, "file_contains", "out/hello.txt", "Hello")
    assert not passed and fclass == "logical" and "does not contain 'Hello'" in evidence
    # the output saying "hello" does not help: the file decides
    res = evaluate(
        Check(kind="file_contains", path="notes.md", value="hello"),
        output="I wrote hello into notes.md",
        exit_code=0,
        workspace=ws,
    )
    assert not res.passed


def test_file_matches_is_re2_over_the_content(ws: Path) -> None:
    assert _run(ws, "file_matches", "notes.md", r"^TODO: \w+")[0]
    assert not _run(ws, "file_matches", "notes.md", r"^ship")[0]  # (?m): line starts only
    assert _run(ws, "file_matches", "out/hello.txt", r"^hello$")[0]


def test_a_missing_file_is_environmental(ws: Path) -> None:
    for kind in ("file_contains", "file_matches"):
        passed, evidence, fclass = _run(ws, kind, "out/absent.txt", "x")
        assert not passed and fclass == "environmental" and "does not exist" in evidence


@pytest.mark.parametrize(
    ("kind", "path", "value", "message"),
    [
        ("file_contains", "../outside.txt", "x", "outside the workspace"),
        ("file_contains", "/etc/passwd", "root", "outside the workspace"),
        ("file_contains", "", "x", "path is empty"),
        ("file_contains", "notes.md", "", "non-empty text"),
        ("file_contains", "notes.md", None, "non-empty text"),
        ("file_contains", "notes.md", True, "non-empty text"),
        ("file_matches", "notes.md", "(", "bad regular expression"),
        ("file_matches", "notes.md", r"(a)\1", "bad regular expression"),
        ("file_matches", "notes.md", 3, "non-empty regular expression"),
    ],
)
def test_unusable_file_checks_are_plan_problems(
    ws: Path, kind: str, path: str, value: object, message: str
) -> None:
    problem = check_problem(Check(kind=kind, path=path, value=value), ws)
    assert problem is not None and message in problem


def test_usable_file_checks_pass_plan_validation_even_before_the_file_exists(ws: Path) -> None:
    for kind, value in (("file_contains", "hello"), ("file_matches", "h.llo")):
        assert check_problem(Check(kind=kind, path="out/new.txt", value=value), ws) is None
        assert reads_workspace(Check(kind=kind, path="out/new.txt", value=value))


def test_no_symlink_is_followed_out_of_the_workspace(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    secret = tmp_path / "secret.txt"
    secret.write_text("the outside secret")
    (ws / "link.txt").symlink_to(secret)
    (ws / "dir").symlink_to(tmp_path)
    for path in ("link.txt", "dir/secret.txt"):
        for kind, value in (("file_contains", "secret"), ("file_matches", "secret")):
            passed, evidence, _ = _run(ws, kind, path, value)
            assert not passed and "the outside secret" not in evidence


def test_a_fifo_is_not_read(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    passed, _, fclass = _run(tmp_path, "file_contains", "pipe", "x")
    assert not passed and fclass == "environmental"  # and it did not block


def test_a_missing_file_nobody_wrote_is_the_executors_fault(ws: Path) -> None:
    """Law 0 attribution: a claim to have written the file, without a call, is logical;
    a write that failed is environmental."""
    criterion = Criterion(
        id="c",
        text="the file says hi",
        check=Check(kind="file_contains", path="out/x.txt", value="hi"),
    )
    claimed = rule_verdict(criterion, "I wrote out/x.txt", [], ws)
    assert not claimed.passed and claimed.failure_class == "logical"
    failed_write = ToolCall(tool="write_file", target="out/x.txt", ok=False, error="denied")
    refused = rule_verdict(criterion, "", [failed_write], ws)
    assert not refused.passed and refused.failure_class == "environmental"


_PROPS = settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])


@_PROPS
@given(content=st.text(max_size=200), needle=st.text(min_size=1, max_size=8))
def test_file_contains_passes_exactly_when_the_text_is_in_the_file(
    tmp_path: Path, content: str, needle: str
) -> None:
    (tmp_path / "f.txt").write_bytes(content.encode("utf-8", errors="surrogatepass"))
    try:
        text = (tmp_path / "f.txt").read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        return
    assert _run(tmp_path, "file_contains", "f.txt", needle)[0] == (needle in text)


def test_a_file_check_cannot_verify_the_answer_to_a_question() -> None:
    """Real-model bench, task 8 (run B): the Perceiver checked file_contains 'class User'
    for "what is the name of the class …?" and the answer "No" was accepted. A check of
    the workspace's state passes whatever the answer: it is sent back for a question."""
    from artoo.actors.verification.checks import guess_problem

    check = Check(kind="file_contains", path="src/models/user.py", value="class User")
    question = "what is the name of the class defined in src/models/user.py?"
    problem = guess_problem(check, question)
    assert problem is not None and "not the answer" in problem
    for kind in ("file_exists", "file_matches"):
        assert guess_problem(Check(kind=kind, path="a", value="x"), "is there an a?") is not None
    assert guess_problem(check, "create the file out/hello.txt containing hello") is None
    assert guess_problem(check, "how many lines? write the count to out/n.txt") is None


def test_a_count_glob_may_not_narrow_what_the_request_asks_to_count() -> None:
    """Real-model bench, task 5 (run C): the Perceiver counted archive/**/*.py for "how
    many files are in the archive directory?" — 0 — and the answer 0 was accepted."""
    from artoo.actors.verification.checks import guess_problem

    def problem(path: str, request: str, unit: str = "files") -> str | None:
        return guess_problem(Check(kind="count_matches", path=path, value=unit), request)

    narrowed = problem("archive/**/*.py", "how many files are in the archive directory?")
    assert narrowed is not None and "'py'" in narrowed
    assert problem("archive", "how many files are in the archive directory?") is None
    assert problem("archive/**", "how many files are in the archive directory?") is None
    assert problem("src/**/*.py", "count the python files under src") is None
    assert problem("src/**/*.py", "how many .py files are in src?") is None
    assert problem("docs/*.md", "how many markdown files in docs?") is None
    assert problem("notes/*.txt", "how many files in notes?") is not None


def test_a_narrowing_count_glob_is_widened_to_its_directory(tmp_path: Path) -> None:
    """Real-model bench, task 5 (run D): the Perceiver repeated archive/**/*.py after the
    reason; the repair counts the directory the request names."""
    from artoo.actors.roles.perceiver import without_unusable_checks
    from artoo.actors.verification.checks import widened
    from artoo.schemas import TaskSpec

    request = "how many files are in the archive directory?"
    narrow = Check(kind="count_matches", path="archive/**/*.py", value="files")
    assert widened(narrow, request) == Check(kind="count_matches", path="archive", value="files")
    assert widened(Check(kind="count_matches", path="*.py", value="files"), "how many files?") == (
        Check(kind="count_matches", path=".", value="files")
    )
    assert (
        widened(Check(kind="count_matches", path="src/**/*.py", value="files"), "python?") is None
    )
    assert widened(Check(kind="output_contains", value="x"), request) is None
    (tmp_path / "archive").mkdir()
    (tmp_path / "archive" / "old.log").write_text("x\n")
    spec = TaskSpec(
        text=request,
        intent="count",
        slug="count",
        criteria=[Criterion(id="t1", text="the count", mode="verifiable", check=narrow)],
    )
    (fixed,) = without_unusable_checks(spec, tmp_path).criteria
    assert fixed.mode == "verifiable" and fixed.check is not None
    assert fixed.check.path == "archive"


def test_a_count_in_a_place_the_request_never_names_is_sent_back() -> None:
    """Real-model bench, task 5 (run E): the Perceiver counted files in ``src`` for "how
    many files are in the archive directory?"; the check then told the Executor 3."""
    from artoo.actors.verification.checks import guess_problem

    def problem(path: str, request: str, unit: str = "files") -> str | None:
        return guess_problem(Check(kind="count_matches", path=path, value=unit), request)

    wrong = problem("src", "how many files are in the archive directory?")
    assert wrong is not None and "'src'" in wrong
    assert problem("archive", "how many files are in the archive directory?") is None
    # the place is named; the unit fits what the request counts (a unit that does not fit
    # is another problem: test_a_count_of_a_plain_unit_the_request_does_not_count_is_unusable)
    todo = "how many TODO lines are in my notes?"
    assert problem("notes/todo.txt", todo, "lines containing TODO") is None
    assert problem("README.md", "how many words in the readme?", "words") is None
    assert problem("src/**/*.py", "count the python files under src") is None
    assert problem("**/*.py", "how many python files are there?") is None
    assert problem("./**/*.py", "how many python files are there?") is None
    assert problem("src/**/*.py", "how many python files are there?") is not None
