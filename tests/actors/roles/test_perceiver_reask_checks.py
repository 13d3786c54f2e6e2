"""A re-asked criterion whose words only echo artoo's re-ask (``perceiver.reasked_spec``)
loses those words but keeps its check, stated by code: the words are artoo's, the check
may be the user's (a count of a file's lines was once dropped with the words around it,
leaving a count question with no count check). One with no check is still dropped."""

from __future__ import annotations

from pathlib import Path

from artoo.actors.roles.perceiver import Perceiver, reasked_spec
from artoo.schemas import Check, Criterion, TaskRequest, TaskSpec
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
    with RoleHarness(Perceiver, model=model, workspace=tmp_path) as h:
        h.send(TaskRequest(text=REQUEST))
        (spec,) = h.wait_for(TaskSpec)
    (criterion,) = spec.body.criteria
    assert criterion.check is not None and criterion.check.kind == "count_matches"
    assert criterion.check.path == "logs/build.log" and criterion.mode == "verifiable"
    assert ECHO not in criterion.text
