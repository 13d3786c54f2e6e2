"""The Perceiver: a TaskSpec from a valid answer — the reading checked by code, its
criteria code's —, a StepFailed (not a crash) otherwise."""

from __future__ import annotations

from pathlib import Path

from artoo.actors.roles.perceiver import Perceiver
from artoo.schemas import Check, StepFailed, TaskRequest, TaskSpec
from artoo.testing import RoleHarness, write_script


def test_a_valid_reading_becomes_a_task_spec(tmp_path: Path) -> None:
    """The model reads the request into structure; code writes the criteria from it. A
    slug or criteria the model adds are dropped: the tag is code's, from the request, and
    no model writes a criterion."""
    answer = {
        "intent": "Count the Python files",
        "kind": "question",
        "answer": "number",
        "count": "files",
        "targets": [{"path": "src/**/*.py", "role": "read"}],
        "slug": "Count Py Files!",
        "criteria": [{"text": "a number", "mode": "verifiable", "check": {"kind": "exit_code"}}],
    }
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("x = 1\n")
    model = write_script(tmp_path / "s.toml", [{"role": "perceiver", "content": answer}])
    with RoleHarness(Perceiver, model=model, workspace=tmp_path) as h:
        h.send(TaskRequest(text="count the python files"))
        (spec,) = h.wait_for(TaskSpec)
    body = spec.body
    assert body.slug == "count-files-python-the" and body.intent == "Count the Python files"
    assert (body.kind, body.shape, body.unit) == ("question", "number", "files")
    assert [(t.path, t.role) for t in body.targets] == [("src/**/*.py", "read")]
    checks = [c.check for c in body.criteria]
    assert [c.id for c in body.criteria] == ["t1", "t2"]
    assert [c.kind for c in checks if c is not None] == ["answered", "count_matches"]
    assert checks[1] == Check(kind="count_matches", path="src/**/*.py", value="files")


def test_a_reading_with_no_kind_is_no_reading_and_fails_closed(tmp_path: Path) -> None:
    """``kind`` is required of a reading: an answer with none does not decode. The
    Perceiver asks for one repair; a repair with no kind either is no valid reading — a
    StepFailed, and no TaskSpec (no plan can follow: fail closed, never a guessed kind).
    (:func:`reading.checked` still reads a kind outside the vocabulary as ``mixed`` for a
    caller that passes one: ``tests/actors/test_reading.py``.)"""
    model = write_script(
        tmp_path / "s.toml",
        [{"role": "perceiver", "times": 2, "content": {"intent": "tidy up", "answer": "text"}}],
    )
    with RoleHarness(Perceiver, model=model, workspace=tmp_path) as h:
        h.send(TaskRequest(text="tidy up the notes"))
        (failed,) = h.wait_for(StepFailed)
        h.sync()
        specs = h.published(TaskSpec)
        calls = [e.body for e in h.recorder.envelopes if type(e.body).__name__ == "LLMCall"]
    assert specs == []
    assert len(calls) == 2  # the answer and its one repair
    assert failed.body.step == "perceive" and failed.body.role == "perceiver"
    assert "no valid task reading" in failed.body.error and "kind" in failed.body.error


def test_no_valid_reading_is_a_clean_step_failure(tmp_path: Path) -> None:
    model = write_script(tmp_path / "s.toml", [{"role": "perceiver", "times": 0, "content": "?"}])
    with RoleHarness(Perceiver, model=model) as h:
        h.send(TaskRequest(text="count"))
        (failed,) = h.wait_for(StepFailed)
        assert h.ref.is_alive()
    assert failed.body.step == "perceive" and failed.body.role == "perceiver"
    assert failed.task_id == "t1"


def test_a_target_outside_the_workspace_is_dropped_by_code_not_asked_again(
    tmp_path: Path,
) -> None:
    """Code checks the reading against the workspace, once: a target that cannot be a
    workspace path is dropped with a note — the model is not asked again (one call)."""
    outside = {
        "intent": "Count",
        "kind": "question",
        "answer": "number",
        "targets": [{"path": "/etc/passwd", "role": "read"}, {"path": "../x.txt", "role": "write"}],
    }
    model = write_script(tmp_path / "s.toml", [{"role": "perceiver", "content": outside}])
    with RoleHarness(Perceiver, model=model, workspace=tmp_path) as h:
        h.send(TaskRequest(text="count"))
        (spec,) = h.wait_for(TaskSpec)
        calls = [e.body for e in h.recorder.envelopes if type(e.body).__name__ == "LLMCall"]
    assert len(calls) == 1
    body = spec.body
    assert body.targets == [] and body.kind == "question"  # no write target: still a question
    assert [n for n in body.notes if "no workspace path" in n] == [
        "target '/etc/passwd' is no workspace path: dropped",
        "target '../x.txt' is no workspace path: dropped",
    ]


def test_the_same_request_three_times_gets_one_memory_tag(tmp_path: Path) -> None:
    """Three readings of one request with three different model slugs and intents (the
    issue's run: "find the name of the class…", "return the correct checks…") → one tag."""
    readings = [
        {"intent": "find the name of the class", "slug": "find-class-name"},
        {"intent": "return the correct checks to be used", "slug": "return-checks"},
        {"intent": "fix the criterion", "slug": "fix-criterion"},
    ]
    question = {"kind": "question", "answer": "name"}
    readings = [{**question, **r} for r in readings]
    model = write_script(
        tmp_path / "s.toml", [{"role": "perceiver", "content": r} for r in readings]
    )
    text = "Which class in src/models/user.py stores the user's email?"
    with RoleHarness(Perceiver, model=model) as h:
        for n in range(3):
            h.send(TaskRequest(text=text), task_id=f"t{n}")
        specs = h.wait_for(TaskSpec, count=3)
    assert len({s.body.slug for s in specs}) == 1
    assert specs[0].body.slug.startswith("src-models-user-py")


def test_a_question_that_restates_the_request_is_not_asked(tmp_path: Path) -> None:
    """A kept real-model log: the Perceiver put the user's own question to the operator
    ("How many lines are in notes/todo.txt? [1 / 2 / … / 8]"), one call and a wait for an
    answer no one could give. Such a question (the request's own words) is dropped and
    the reading goes on; a question that names a choice the request does not make is
    still asked."""
    from artoo.schemas import UserQuestion

    def reading(question: dict[str, object]) -> dict[str, object]:
        return {
            "intent": "count lines",
            "kind": "question",
            "answer": "number",
            "question": question,
        }

    restated = reading(
        {
            "text": "How many lines are in notes/todo.txt?",
            "options": ["1", "2", "3"],
            "default": "1",
        }
    )
    model = write_script(tmp_path / "s.toml", [{"role": "perceiver", "content": restated}])
    with RoleHarness(Perceiver, model=model) as h:
        h.send(TaskRequest(text="how many lines are in notes/todo.txt?"))
        (spec,) = h.wait_for(TaskSpec)
        assert h.published(UserQuestion) == []
    assert spec.body.kind == "question"
    choice = reading(
        {
            "text": "Which file: notes/todo.txt or notes/done.txt?",
            "options": ["notes/todo.txt", "notes/done.txt"],
        }
    )
    model = write_script(tmp_path / "c.toml", [{"role": "perceiver", "content": choice}])
    with RoleHarness(Perceiver, model=model) as h:
        h.send(TaskRequest(text="how many lines are in the notes file?"))
        (asked,) = h.wait_for(UserQuestion)
    assert "notes/done.txt" in asked.body.text


def test_restates_request_worked_examples() -> None:
    from artoo.actors.verification.answers import QuestionAnswer, restates_request

    def q(text: str) -> QuestionAnswer:
        return QuestionAnswer(text=text)

    # words shared, of either text's (any language: no word list), case and order aside
    request = "How many ERROR lines does logs/app.log have?"
    assert restates_request(q("logs/app.log: how many ERROR lines does it have?"), request)
    assert restates_request(q("how many error lines does logs/app.log have"), request)
    assert not restates_request(q("Count ERROR or also WARNING lines?"), request)
    assert not restates_request(q("Which log: logs/app.log or logs/old.log?"), request)
    assert not restates_request(q("?"), request)  # no content word: not a restatement
    assert not restates_request(q("Which file?"), "write the file")  # a short clarification
