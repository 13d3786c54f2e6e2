"""A re-asked criterion whose words only echo artoo's re-ask (``perceiver.reasked_spec``)
loses those words but keeps its check, stated by code: the words are artoo's, the check
may be the user's (a count of a file's lines was once dropped with the words around it,
leaving a count question with no count check). One with no check is still dropped."""

from __future__ import annotations

from pathlib import Path

import msgspec

from artoo import Config
from artoo.actors.roles.perceiver import Perceiver, reasked_spec, with_code_count
from artoo.schemas import Check, Criterion, LLMCall, TaskRequest, TaskSpec
from artoo.testing import RoleHarness, write_script

REQUEST = "how many lines does logs/build.log have?"
SAID = (
    "These checks cannot be used: the request asks for a count but no criterion checks "
    "one: add a count_matches check (path = what to count, value = what unit). Answer "
    "again, fixing that (or with check null)."
)
ECHO = "the request asks for a count but no criterion checks one"
COUNT = Check(kind="count_matches", path="logs/build.log", value="lines")


def _spec(*criteria: Criterion) -> TaskSpec:
    return TaskSpec(
        text=REQUEST,
        intent="count the lines of logs/build.log",
        slug="count-lines-build",
        criteria=list(criteria),
        kind="question",
        shape="number",
    )


def test_an_echoing_criterion_keeps_its_check_in_codes_words() -> None:
    again = _spec(
        Criterion(id="t1", text=ECHO, mode="plausible", check=COUNT),
        Criterion(id="t2", text="add a count_matches check", mode="plausible"),
        Criterion(id="t3", text="the answer states the number of lines", mode="plausible"),
    )
    spec = reasked_spec(_spec(), again, SAID)
    kept = {c.id: c for c in spec.criteria}
    assert sorted(kept) == ["t1", "t3"]  # t2 echoes and checks nothing: dropped
    assert kept["t1"].check == COUNT and kept["t1"].mode == "verifiable"
    assert kept["t1"].text == "the answer passes count_matches logs/build.log 'lines'"
    assert kept["t3"].text == "the answer states the number of lines"


def test_a_check_with_no_path_reads_without_a_double_space() -> None:
    contains = Check(kind="output_contains", value="lines")
    again = _spec(Criterion(id="t1", text=ECHO, mode="plausible", check=contains))
    (kept,) = reasked_spec(_spec(), again, SAID).criteria
    assert kept.text == "the answer passes output_contains 'lines'" and kept.check == contains


def test_without_the_reask_words_nothing_is_echoed() -> None:
    again = _spec(Criterion(id="t1", text=ECHO, mode="plausible", check=COUNT))
    assert reasked_spec(_spec(), again).criteria == again.criteria


def test_the_perceiver_keeps_the_count_check_of_an_echoing_reask(tmp_path: Path) -> None:
    """End to end in the role: the first reading has no count check; the re-ask answers
    with artoo's own words around the right check — the TaskSpec counts."""
    first = {"intent": "count the lines", "kind": "question", "answer": "number", "criteria": []}
    echoed = {
        **first,
        "criteria": [
            {
                "text": ECHO,
                "mode": "verifiable",
                "check": {"kind": "count_matches", "path": "logs/build.log", "value": "lines"},
            }
        ],
    }
    model = write_script(
        tmp_path / "s.toml",
        [{"role": "perceiver", "content": first}, {"role": "perceiver", "content": echoed}],
    )
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "build.log").write_text("ok\nWARN disk\nok\n")
    # code writes no count check here (``code_count_check`` off): the re-ask is the path
    config = Config(code_count_check=False)
    with RoleHarness(Perceiver, model=model, workspace=tmp_path, config=config) as h:
        h.send(TaskRequest(text=REQUEST))
        (spec,) = h.wait_for(TaskSpec)
    (criterion,) = spec.body.criteria
    assert criterion.check is not None and criterion.check.kind == "count_matches"
    assert criterion.check.path == "logs/build.log" and criterion.mode == "verifiable"
    assert ECHO not in criterion.text


def test_code_writes_a_plain_counts_check_and_asks_nothing_again(tmp_path: Path) -> None:
    """A plain count request read with no count check gets the one code writes
    (``Config.code_count_check``), and the model is not asked again for it: one model
    call, where the re-ask took two (and a small model's re-ask often still had none)."""
    first = {"intent": "count the lines", "kind": "question", "answer": "number", "criteria": []}
    model = write_script(tmp_path / "s.toml", [{"role": "perceiver", "content": first}])
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "build.log").write_text("ok\nWARN disk\nok\n")
    with RoleHarness(Perceiver, model=model, workspace=tmp_path) as h:
        h.send(TaskRequest(text=REQUEST))
        (spec,) = h.wait_for(TaskSpec)
        calls = h.published(LLMCall)
    assert len(calls) == 1
    (criterion,) = spec.body.criteria
    assert criterion.check == COUNT and criterion.mode == "verifiable"
    assert criterion.id == "t1"


def test_code_writes_no_check_where_the_model_has_a_usable_one(
    tmp_path: Path,
) -> None:
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "build.log").write_text("ok\n")
    own = _spec(Criterion(id="t1", text="the lines", mode="verifiable", check=COUNT))
    assert with_code_count(own, tmp_path) == own  # the model's count check stands
    words = Check(kind="count_matches", path="logs/build.log", value="words")
    other = _spec(Criterion(id="t1", text="the words", mode="verifiable", check=words))
    assert [c.check for c in with_code_count(other, tmp_path).criteria] == [words, COUNT]
    outside = msgspec.structs.replace(_spec(), text="how many lines does ../x/a.log have?")
    assert with_code_count(outside, tmp_path) == outside  # an unusable check: none written
    # the request decides, not the workspace: a rerun's scratch workspace writes the same
    gone = msgspec.structs.replace(_spec(), text="how many lines does logs/gone.log have?")
    (written,) = with_code_count(gone, tmp_path).criteria
    assert written.check == Check(kind="count_matches", path="logs/gone.log", value="lines")
    unusable = Check(kind="count_matches", path="logs/build.log", value="classes")
    bad = _spec(Criterion(id="t1", text="the classes", mode="plausible", check=unusable))
    (kept, added) = with_code_count(bad, tmp_path).criteria
    assert kept.check == unusable and added.id == "t2" and added.check == COUNT
