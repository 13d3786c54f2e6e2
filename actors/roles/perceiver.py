"""R1 Perceiver — turns free text into a TaskSpec.

Responsibilities:
    Read the user's request and state its intent, its kind (question / change /
    creation) and, for a question, what the answer must state (number / name / value /
    text) — structured fields that code checks against the request
    (``verification.request.duties``) — and the task-level success criteria. The memory
    tag (``TaskSpec.slug``) is decided by code from the request
    (``verification.request.request_tag``), never by the model's free slug. A
    criterion that code can decide is marked ``verifiable`` with a deterministic
    ``check`` from the documented vocabulary (see ``artoo.actors.verification.checks``);
    any other is ``plausible``. A check that cannot be used, or that guesses a number
    the request does not state, or a count request with no count check
    (``count_matches``: code counts, the answer must state it) is asked again once with
    the reasons; a check still unusable is dropped (the criterion stays, plausible). A
    plain count request with no usable count check gets the one code writes
    (``checks.code_count_check``, ``Config.code_count_check``) — before the re-ask, so a
    reading whose only problem was the missing count check is not asked again. A
    question about the one CSV file it names gets the ``table_value`` check code writes
    (:func:`with_code_table`, ``Config.code_table_check``): code computes the value when
    the check reads the file, and a count question holding one is not asked again for a
    count check; a question about Python code (a constant's value, a class's parents,
    which file defines a name), the ``code_value`` check code writes
    (:func:`with_code_lookup`, ``Config.code_lookup_check``). The
    re-ask changes only the criteria: the intent, kind and shape stay those read from
    the user's text alone (artoo's own words never enter the intent). When the request
    is ambiguous the model may ask the user one bounded question
    (``PerceiverAnswer.question``): it is published as a UserQuestion and the reading
    waits for its QuestionAnswered, then is asked again with the answer. A question that
    only restates the request (``restates_request``: it would ask the user for the task's
    own answer) is not asked. The very same request (case and spacing aside) as one an
    accepted episode in memory recorded its reading for is not read by the model again:
    the newest such episode's reading (intent, kind, shape, criteria as they were
    checked) is its TaskSpec, which names the episode (``TaskSpec.reused``;
    ``Config.reuse_reading``). Which episodes memory holds is taken from the log alone:
    the megram store as it stood when this role subscribed, then the memory events
    delivered to it in seq order (:class:`Readings`), so a rerun finds the same.

Input contract:
    TaskRequest; QuestionAnswered (of a question it asked); MegramRecorded and
    MegramForgotten (the accepted episodes' readings it keeps, even after their task's
    end).

Output contract:
    TaskSpec; UserQuestion (at most one per task); StepFailed (a clean failure) when the
    model gives no valid answer after one repair attempt; LLMCall for each model call.

Constraints:
    Does NOT plan or execute; does NOT invent criteria when the model fails (Law 0);
    does NOT choose ids (criteria get ids ``t1``, ``t2`` … from code).
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import msgspec

from artoo.actors.llm import LLMRequest, ask_structured
from artoo.actors.runtime.role import Equipment, Role, handles
from artoo.actors.verification._lookups import code_lookup_check
from artoo.actors.verification._tables import code_table_check
from artoo.actors.verification.answers import (
    PerceiverAnswer,
    answered_prompt,
    bounded_question,
    echoes,
    make_criteria,
    restates_request,
    user_question,
)
from artoo.actors.verification.checks import (
    VOCABULARY,
    asks_count,
    check_problem,
    code_count_check,
    count_checked,
    guess_problem,
    narrowed,
    widened,
)
from artoo.actors.verification.request import KINDS, SHAPES, request_tag, same_request
from artoo.eventstore import MegramReader
from artoo.schemas import (
    Check,
    Criterion,
    Envelope,
    LLMCall,
    Megram,
    MegramForgotten,
    MegramRecorded,
    Message,
    QuestionAnswered,
    StepFailed,
    TaskRequest,
    TaskSpec,
    UserQuestion,
)

__all__ = [
    "SYSTEM_PROMPT",
    "Perceiver",
    "Readings",
    "build_spec",
    "reading_spec",
    "reasked_spec",
    "with_code_count",
    "with_code_lookup",
    "with_code_table",
]

SYSTEM_PROMPT = (
    "You read a user's request to artoo and answer with one JSON object: "
    '{"intent": "<one sentence>", "kind": "question" or "change" or "creation", '
    '"answer": "number" or "name" or "value" or "text", "criteria": [...]}.\n'
    "kind: question when the user wants to know something, change when files must be "
    "changed, creation when something new must be made. answer: what an answer to a "
    "question must state (a number for how many, a name for which, the value for what "
    "something returns).\n"
    'A criterion is {"text": "<what must be true>", "mode": "verifiable", "check": '
    '{"kind": ..., "path": ..., "value": ...}} when code can decide it with one of these '
    'checks, else {"text": ..., "mode": "plausible", "check": null}:\n'
    + "\n".join(f"- {kind}: {how}" for kind, how in VOCABULARY.items())
    + "\nNever guess an answer you do not know: for how many / count, use count_matches "
    "(code counts, the answer must state that number). For a file the request writes, "
    "check the file with file_contains (path = the file, value = the text), not the output.\n"
    'Example. Request: "how many words are in docs/intro.md?" Answer: {"intent": "count '
    'the words in docs/intro.md", "kind": "question", "answer": "number", '
    '"criteria": [{"text": "the '
    'answer states the number of words in docs/intro.md", "mode": "verifiable", "check": '
    '{"kind": "count_matches", "path": "docs/intro.md", "value": "words"}}]}'
    "\nOnly when the request is ambiguous in a way only the user can settle, add "
    '"question": {"text": "<one question>", "options": ["<choice>", ...] (or [] for free '
    'text), "default": "<the choice to take without an answer>"}.'
)


def _key(text: str) -> str:
    """A request as :func:`same_request` compares it: lowercase, spacing collapsed."""
    return " ".join(text.lower().split())


class Readings:
    """The readings of accepted episodes, by request (pure): the Perceiver's projection of
    the log's memory events — ``MegramRecorded`` adds an intent episode that ended
    ``accept`` with its :class:`Reading` (the newest of a request wins), ``MegramForgotten``
    drops it. An episode that ended ``success`` is not read again: some criterion failed,
    and the reading may be why."""

    def __init__(self) -> None:
        self.by_request: dict[str, Megram] = {}

    def add(self, m: Megram) -> None:
        """Keep ``m``'s reading when it is an accepted episode that recorded one."""
        if m.reading is not None and m.state == "accept" and m.space.startswith("intent:"):
            self.by_request[_key(m.request)] = m

    def forget(self, megram_id: str) -> None:
        """Drop the reading of the episode ``megram_id``, if it is kept."""
        for key, m in list(self.by_request.items()):
            if m.id == megram_id:
                del self.by_request[key]

    @classmethod
    def of(cls, store: MegramReader) -> Readings:
        """The readings of ``store``'s live megrams, oldest first (so the newest wins)."""
        out = cls()
        for m in sorted(store.megrams(), key=lambda m: (m.created_at, m.id)):
            out.add(m)
        return out

    def spec(self, text: str, environment: str = "local") -> TaskSpec | None:
        """The TaskSpec of ``text`` read as the newest accepted episode of the very same
        request read it (:func:`same_request`), naming it in ``reused``; None when memory
        holds none (a paraphrase included)."""
        m = self.by_request.get(_key(text))
        return None if m is None else reading_spec(m, text, environment)


def reading_spec(episode: Megram, text: str, environment: str = "local") -> TaskSpec | None:
    """The TaskSpec of ``text`` read as ``episode`` recorded its reading, naming it in
    ``reused`` (pure); None when the episode recorded none or its request is not the very
    same request (:func:`same_request`)."""
    reading = episode.reading
    if reading is None or not same_request(episode.request, text):
        return None
    return TaskSpec(
        text=text,
        intent=reading.intent,
        slug=request_tag(text),
        criteria=list(reading.criteria),
        environment=environment,
        kind=reading.kind,
        shape=reading.shape,
        reused=episode.id,
    )


def build_spec(text: str, answer: PerceiverAnswer, environment: str = "local") -> TaskSpec:
    """The TaskSpec for ``text`` from a valid model answer (pure): the slug is
    :func:`request_tag` of the request (the model's ``slug`` is ignored); a kind or shape
    outside the vocabulary reads as ``unknown`` / none (the stricter duties)."""
    kind = answer.kind.strip().lower()
    shape = answer.answer.strip().lower()
    kind = kind if kind in KINDS else "unknown"
    shape = shape if shape in SHAPES else ""
    return TaskSpec(
        text=text,
        intent=answer.intent.strip() or text,
        slug=request_tag(text),
        criteria=make_criteria(answer.criteria, "t"),
        environment=environment,
        kind=kind,
        shape=shape,
    )


def reasked_spec(first: TaskSpec, again: TaskSpec, said: str = "") -> TaskSpec:
    """The spec of a re-ask (pure): the re-asked criteria, with everything else read from
    the user's text alone — the re-ask's intent would hold artoo's own words ("fix the
    criterion"). A re-asked criterion that only echoes what the re-ask ``said``
    (:func:`echoes`) loses those words: artoo's own words are no criterion of the user's —
    but the check it carries is kept, stated by code (a count of the lines of
    notes/meeting.txt was once dropped with the words around it, leaving a count question
    with no count check); one with no check is dropped."""
    kept = []
    for c in again.criteria:
        if not (said and echoes(c.text, said)):
            kept.append(c)
        elif c.check is not None:  # the words are artoo's, the check may be the user's
            check = c.check
            text = f"the answer passes {check.kind} {check.path} {check.value!r}".replace("  ", " ")
            kept.append(msgspec.structs.replace(c, text=text, mode="verifiable"))
    return msgspec.structs.replace(first, criteria=kept)


def _unusable(check: Check, spec: TaskSpec, workspace: Path) -> str | None:
    return check_problem(check, workspace) or guess_problem(check, spec.text, spec.kind, spec.shape)


def spec_problems(spec: TaskSpec, workspace: Path) -> list[str]:
    """Why some of a TaskSpec's checks cannot be used — unusable (see ``check_problem``)
    or guessing a number the request does not state — and, for a request that asks for a
    count, the lack of a count check (pure but for reading the workspace)."""
    out = []
    for criterion in spec.criteria:
        if criterion.check is not None:
            problem = _unusable(criterion.check, spec, workspace)
            if problem is not None:
                out.append(f"criterion {criterion.id}: {problem}")
    checks = [c.check for c in spec.criteria if c.check is not None]
    tabled = any(c.kind == "table_value" for c in checks)  # code computes it, if it can
    if asks_count(spec.text, spec.kind, spec.shape) and not (count_checked(checks) or tabled):
        out.append(
            "the request asks for a count but no criterion checks one: add a count_matches "
            "check (path = what to count, value = what unit)"
        )
    return out


def without_unusable_checks(spec: TaskSpec, workspace: Path) -> TaskSpec:
    """The spec with each unusable or guessing check removed: its criterion stays, as
    plausible (a model and, under low confidence, a human decide it — it never passes by
    default). A count glob that narrows what the request asks to count is widened to its
    directory instead (``checks.widened``), and a plain ``lines`` count of a request that
    names what the lines hold counts the lines containing it (``checks.narrowed``), when
    that is usable."""
    criteria = []
    for c in spec.criteria:
        if c.check is None or _unusable(c.check, spec, workspace) is None:
            criteria.append(c)
            continue
        wider = widened(c.check, spec.text) or narrowed(c.check, spec.text)
        if wider is not None and _unusable(wider, spec, workspace) is None:
            criteria.append(msgspec.structs.replace(c, check=wider, mode="verifiable"))
        else:
            criteria.append(msgspec.structs.replace(c, check=None, mode="plausible"))
    return msgspec.structs.replace(spec, criteria=criteria)


def _with_criterion(spec: TaskSpec, text: str, check: Check) -> TaskSpec:
    """The spec with one more verifiable criterion, code's, under the next free id."""
    ids = {c.id for c in spec.criteria}
    n = len(spec.criteria) + 1
    while f"t{n}" in ids:
        n += 1
    criterion = Criterion(id=f"t{n}", text=text, mode="verifiable", check=check)
    return msgspec.structs.replace(spec, criteria=[*spec.criteria, criterion])


def with_code_count(spec: TaskSpec, workspace: Path, *, unit_first: bool = False) -> TaskSpec:
    """The spec with the count check code writes for a plain count request
    (``checks.code_count_check``: "how many lines are in notes/meeting.txt?" →
    ``count_matches notes/meeting.txt lines``) added as one more verifiable criterion,
    when none of its usable checks decides a count and that check is usable (as the
    model's are judged: :func:`spec_problems`); else the spec as it is. It reads the
    request, not the workspace — a rerun, over a scratch workspace, writes the same
    check. A small model's reading often gave such a question no count check, even
    asked again, and its answer then rested on the model. ``unit_first``
    (``Config.unit_count_phrase``): a unit named before "count" is the unit counted ("what
    is the line count of src/app.py?")."""
    usable = [
        c.check
        for c in spec.criteria
        if c.check is not None and _unusable(c.check, spec, workspace) is None
    ]
    check = code_count_check(spec.text, spec.kind, spec.shape, unit_first=unit_first)
    written = check is not None and bool(check.into)  # a count the request writes to a file
    if count_checked(usable) and not (written and not any(c.into for c in usable)):
        return spec
    if check is None or _unusable(check, spec, workspace) is not None:
        return spec
    where = check.into or "the answer"
    text = f"{where} states the count code measures: count_matches {check.path} {check.value!r}"
    return _with_criterion(spec, text, check)


def with_code_table(spec: TaskSpec) -> TaskSpec:
    """The spec with the ``table_value`` check code writes for a question about one
    CSV file (``_tables.code_table_check``: "what is the total of the amount column in
    data/sales.csv?" → ``table_value data/sales.csv``, the question as its value) added as
    one more verifiable criterion, unless one is there; else the spec as it is (pure: it
    reads the request — whether code can compute the value is found when the check reads
    the file, and one it cannot proves nothing)."""
    if any(c.check is not None and c.check.kind == "table_value" for c in spec.criteria):
        return spec
    check = code_table_check(spec.text, spec.kind)
    if check is None:
        return spec
    where = check.into or "the answer"
    text = f"{where} states the value code computes from {check.path}"
    return _with_criterion(spec, text, check)


def with_code_lookup(spec: TaskSpec) -> TaskSpec:
    """The spec with the ``code_value`` check code writes for a question about Python
    code (``_lookups.code_lookup_check``: "what is the value of VERSION in
    src/config.py?" → ``code_value src/config.py``, the question as its value) added as
    one more verifiable criterion, unless one is there; else the spec as it is (pure, as
    :func:`with_code_table`)."""
    if any(c.check is not None and c.check.kind == "code_value" for c in spec.criteria):
        return spec
    check = code_lookup_check(spec.text, spec.kind)
    if check is None:
        return spec
    text = f"the answer states what code looks up in {check.path}"
    return _with_criterion(spec, text, check)


class Perceiver(Role):
    """The Perceiver actor."""

    name: ClassVar[str] = "perceiver"
    publishes: ClassVar[tuple[type[Message], ...]] = (TaskSpec, StepFailed, LLMCall, UserQuestion)
    consumes: ClassVar[tuple[type[Message], ...]] = (
        TaskRequest,
        QuestionAnswered,
        MegramRecorded,
        MegramForgotten,
    )
    after_end: ClassVar[tuple[type[Message], ...]] = (MegramRecorded, MegramForgotten)
    """An episode is recorded as its task ends: taken in after its FinalResult too."""

    def __init__(self, equipment: Equipment, instance: str | None = None) -> None:
        super().__init__(equipment, instance)
        # question id -> (the TaskRequest, the request asked, the answer with the question)
        self.asked: dict[str, tuple[Envelope, LLMRequest, PerceiverAnswer]] = {}
        # memory as the log holds it up to this role's subscription, then its events
        store = equipment.megrams
        reuse = equipment.config.reuse_reading and store is not None
        self.readings = Readings.of(store) if reuse and store is not None else Readings()

    @handles(MegramRecorded)
    def on_megram_recorded(self, env: Envelope) -> None:
        self.readings.add(env.body.megram)

    @handles(MegramForgotten)
    def on_megram_forgotten(self, env: Envelope) -> None:
        self.readings.forget(env.body.id)

    def active_tasks(self) -> list[str]:
        return [env.task_id for env, _, _ in self.asked.values() if env.task_id]

    def forget_task(self, task_id: str) -> None:
        for question_id, (env, _, _) in list(self.asked.items()):
            if env.task_id == task_id:
                del self.asked[question_id]

    @handles(TaskRequest)
    def on_task_request(self, env: Envelope) -> None:
        body: TaskRequest = env.body
        reused = self.readings.spec(body.text) if self.ctx.config.reuse_reading else None
        if reused is not None:  # the very same request, accepted: read as it was then
            self.reply(env, reused)
            return
        request = LLMRequest(
            role=self.name,
            tier="brain",
            task_id=env.task_id,
            max_output_tokens=self.ctx.config.output_caps.perceiver,
            messages=[
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": body.text},
            ],
        )
        answer = ask_structured(self.ctx.model(), request, PerceiverAnswer)
        if not answer.ok or answer.value is None:
            if self.cancelled(env.task_id):  # the call was not made: the cancel ends it
                return
            self.log.warning("no valid task reading", task=env.task_id, error=answer.error)
            self.reply(
                env,
                StepFailed(
                    role=self.sender,
                    step="perceive",
                    error=f"no valid task reading: {answer.error}",
                ),
            )
            return
        question = bounded_question(answer.value.question)
        if question is not None and restates_request(question, body.text):
            self.log.debug("question restates the request: not asked", task=env.task_id)
            question = None  # it would ask the user for the task's own answer
        if question is not None:  # ambiguous: the user settles it first
            question_id = self.ctx.new_id()
            self.asked[question_id] = (env, request, answer.value)
            timeout_s = self.ctx.config.question_timeout_s
            self.reply(env, user_question(question, question_id, self.sender, timeout_s))
            return
        self._read(env, request, msgspec.structs.replace(answer.value, question=None))

    @handles(QuestionAnswered)
    def on_question_answered(self, env: Envelope) -> None:
        body: QuestionAnswered = env.body
        asked = self.asked.pop(body.question_id, None)
        if asked is None or body.answer is None:  # not ours; or no answer: the task ends
            return
        request_env, request, first = asked
        if body.by != "operator" and self.ctx.config.unanswered_keeps_reading:
            # a default no one chose is the model's own guess, not the user's word: the
            # reading stands as first given ("what is RETRIES set to?" asked [10/20/30/40],
            # took 20 with no one to ask, and was read again as a change)
            self._read(request_env, request, msgspec.structs.replace(first, question=None))
            return
        question = bounded_question(first.question)
        assert question is not None
        again = msgspec.structs.replace(
            request,
            messages=[
                *request.messages,
                {"role": "assistant", "content": msgspec.json.encode(first).decode()},
                {"role": "user", "content": answered_prompt(question.text, body.answer)},
            ],
        )
        answer = ask_structured(self.ctx.model(), again, PerceiverAnswer)
        if not answer.ok or answer.value is None:
            if not self.cancelled(request_env.task_id):
                self.reply(
                    request_env,
                    StepFailed(
                        role=self.sender,
                        step="perceive",
                        error=f"no valid task reading: {answer.error}",
                    ),
                )
            return
        self._read(request_env, again, msgspec.structs.replace(answer.value, question=None))

    def _read(self, env: Envelope, request: LLMRequest, value: PerceiverAnswer) -> None:
        """The TaskSpec of a valid reading (its checks asked again once when unusable)."""
        body: TaskRequest = env.body
        coded = self.ctx.config.code_count_check
        unit_first = self.ctx.config.unit_count_phrase
        tabled = self.ctx.config.code_table_check
        looked = self.ctx.config.code_lookup_check
        spec = build_spec(body.text, value)
        if tabled:
            spec = with_code_table(spec)
        if looked:
            spec = with_code_lookup(spec)
        if coded:
            spec = with_code_count(spec, self.ctx.workspace, unit_first=unit_first)
        problems = spec_problems(spec, self.ctx.workspace)
        if problems:  # once more, with the reasons
            said = (
                "These checks cannot be used: "
                + "; ".join(problems)
                + ". Answer again, fixing that (or with check null)."
            )
            retry = msgspec.structs.replace(
                request,
                messages=[
                    *request.messages,
                    {"role": "assistant", "content": msgspec.json.encode(value).decode()},
                    {"role": "user", "content": said},
                ],
            )
            again = ask_structured(self.ctx.model(), retry, PerceiverAnswer)
            if again.ok and again.value is not None:
                spec = reasked_spec(spec, build_spec(body.text, again.value), said)
            spec = without_unusable_checks(spec, self.ctx.workspace)
            if tabled:
                spec = with_code_table(spec)
            if looked:
                spec = with_code_lookup(spec)
            if coded:
                spec = with_code_count(spec, self.ctx.workspace, unit_first=unit_first)
        self.reply(env, spec)
