"""R1 Perceiver — reads free text into one structured reading, checked by code.

Responsibilities:
    Ask the brain-tier model for the request's structured reading
    (``answers.PerceiverAnswer``): its kind (question / change / creation / mixed), its
    targets (workspace paths with their roles: read, write, create, delete), the shape
    of the answer (number, name, value, boolean, version, list, text), the values the
    request gives, and what inside a target it is about (a key, a count's unit, a call).
    The model sees the request and a short listing of the workspace, nothing else. Code
    checks the reading against the request and the workspace
    (``verification.reading.checked``: the stricter reading wins, each change a note) and
    writes the task's criteria from it (``reading.criteria_of``); the TaskSpec carries
    the reading, what code saw of the workspace (``seen``) and the notes — one message
    every later decision reads. The memory tag (``TaskSpec.slug``) is code's
    (``request.request_tag``). When the request is ambiguous the model may ask the user
    one bounded question (a UserQuestion; the reading waits for its QuestionAnswered,
    then is asked again with the answer; an unanswered question leaves the first
    reading as given). The very same request (case and spacing aside) as one an accepted
    episode recorded its reading for is read as that episode read it, with no model
    call (``TaskSpec.reused``); memory's episodes come from the log alone.

Input contract:
    TaskRequest; QuestionAnswered (of a question it asked); MegramRecorded and
    MegramForgotten (the accepted episodes' readings it keeps).

Output contract:
    TaskSpec; UserQuestion (at most one per task); StepFailed when the model gives no
    valid reading after one repair; LLMCall for each model call.

Constraints:
    Does NOT plan or execute; does NOT invent a reading when the model fails (Law 0);
    does NOT choose ids; never reads the request's wording for a decision — only whether
    a path, value, key or call the model gives occurs in it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import ClassVar

import msgspec

from artoo.actors.llm import LLMRequest, ask_structured
from artoo.actors.runtime.role import Equipment, Role, handles
from artoo.actors.tools import discover_tests
from artoo.actors.verification.answers import (
    PerceiverAnswer,
    answered_prompt,
    bounded_question,
    restates_request,
    user_question,
)
from artoo.actors.verification.reading import (
    ANSWERS,
    KINDS,
    ROLES,
    UNITS,
    checked,
    criteria_of,
    look,
    named,
    normal_path,
)
from artoo.actors.verification.request import request_tag, same_request
from artoo.eventstore import MegramReader
from artoo.schemas import (
    POLICY,
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
    "LISTING_MAX",
    "SYSTEM_PROMPT",
    "Perceiver",
    "Readings",
    "listing",
    "read_spec",
    "reading_spec",
]

LISTING_MAX = 60
"""Workspace entries the model is shown with the request at most."""

SYSTEM_PROMPT = (
    "You read a user's request about a project directory and answer with one JSON "
    "object, the request's reading (the request may be in any language):\n"
    f'- "kind": {" / ".join(KINDS)} (question: the user wants to know something; change: '
    "existing files must change; creation: new files must be made; mixed: both an answer "
    "and a change)\n"
    f'- "targets": the files or directories the request is about, each {{"path": ..., '
    f'"role": {" / ".join(ROLES)}}} (read: to answer from; write: an existing file to '
    "change; create: a new file, or a directory ending in / a new file goes into; delete)\n"
    f'- "answer": for a question, what the answer must state: {" / ".join(ANSWERS)}\n'
    '- "key": the setting, key, definition, class or column inside a target the request '
    'is about, as the file names it (e.g. "tool.black.line-length"), else ""\n'
    f'- "count": for "how many", what is counted: {" / ".join(UNITS)}, else ""\n'
    '- "call": the Python call whose result or output is asked, exactly as the request '
    'writes it (e.g. "slugify(\'A b\')"), else ""\n'
    '- "values": the exact values the request itself gives (a new setting, a text to '
    "add, a name to search for), else []\n"
    '- "intent": one sentence.\n'
    'Example: "What line length does black use in pyproject.toml?" -> {"intent": "find '
    'black\'s line length", "kind": "question", "answer": "number", "targets": '
    '[{"path": "pyproject.toml", "role": "read"}], "key": "tool.black.line-length", '
    '"count": "", "call": "", "values": []}\n'
    "Only when the request is ambiguous in a way only the user can settle, add "
    '"question": {"text": ..., "options": [...], "default": ...}.'
)


def listing(workspace: Path, limit: int = LISTING_MAX) -> list[str]:
    """The workspace's entries a reader is shown (pure but for reading it): files and
    directories (``name/``) to depth 2, breadth first, sorted; hidden directories,
    caches and the store left out; at most ``limit``."""
    out: list[str] = []
    level = [""]
    for _depth in range(2):
        nxt = []
        for rel in level:
            try:
                names = sorted(os.listdir(workspace / rel) if rel else os.listdir(workspace))
            except OSError:
                continue
            for name in names:
                path = f"{rel}{name}"
                full = workspace / path
                if full.is_dir() and not full.is_symlink():
                    if name.startswith(".") or name in ("__pycache__", "node_modules"):
                        continue
                    out.append(path + "/")
                    nxt.append(path + "/")
                else:
                    out.append(path)
                if len(out) >= limit:
                    return out
        level = nxt
    return out


def _key(text: str) -> str:
    """A request as :func:`same_request` compares it: lowercase, spacing collapsed."""
    return " ".join(text.lower().split())


class Readings:
    """The readings of accepted episodes, by request (pure): the Perceiver's projection of
    the log's memory events — ``MegramRecorded`` adds an intent episode that ended
    ``accept`` with its reading (the newest of a request wins), ``MegramForgotten`` drops
    it."""

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
        """The TaskSpec of ``text`` as the newest accepted episode of the very same
        request read it, naming it in ``reused``; None when memory holds none."""
        m = self.by_request.get(_key(text))
        return None if m is None else reading_spec(m, text, environment)


def reading_spec(episode: Megram, text: str, environment: str = "local") -> TaskSpec | None:
    """The TaskSpec of ``text`` read as ``episode`` recorded its reading, naming it in
    ``reused`` (pure); None when the episode recorded none, or a reading from before the
    reading had targets (policy 0), or its request is not the very same request."""
    reading = episode.reading
    if reading is None or reading.policy != POLICY or not same_request(episode.request, text):
        return None  # a reading of another policy's rules is read again
    if reading.kind not in KINDS:
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
        targets=list(reading.targets),
        values=list(reading.values),
        key=reading.key,
        unit=reading.unit,
        call=reading.call,
    )


def _has_tests(workspace: Path, hidden: tuple[Path, ...] = ()) -> bool:
    """Whether the workspace has tests code can run (``tools.discover_tests``)."""
    return discover_tests(workspace, hidden=hidden) is not None


def read_spec(
    text: str, answer: PerceiverAnswer, seen: dict[str, bool], environment: str = "local"
) -> TaskSpec:
    """The TaskSpec of a valid model reading of ``text``, checked by code against the
    request and what the workspace held (``seen``), with its criteria (pure)."""
    c = checked(
        text,
        kind=answer.kind,
        shape=answer.answer,
        targets=[(t.path, t.role) for t in answer.targets],
        values=answer.values,
        key=answer.key,
        unit=answer.count,
        call=answer.call,
        seen=seen,
    )
    spec = TaskSpec(
        text=text,
        intent=answer.intent.strip() or text,
        slug=request_tag(text),
        environment=environment,
        kind=c.kind,
        shape=c.shape,
        targets=c.targets,
        values=c.values,
        key=c.key,
        unit=c.unit,
        call=c.call,
        seen=dict(seen),
        notes=c.notes,
    )
    return msgspec.structs.replace(spec, criteria=criteria_of(spec))


def looked_paths(text: str, answer: PerceiverAnswer) -> list[str]:
    """The paths code looks up in the workspace to check a reading (pure): the reading's
    targets, then the request's path-shaped tokens."""
    paths = [p for t in answer.targets if (p := normal_path(t.path)) is not None]
    return list(dict.fromkeys([*paths, *named(text)]))


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
        store = equipment.megrams
        self.readings = Readings.of(store) if store is not None else Readings()

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

    def _failed(self, env: Envelope, error: str | None) -> None:
        if self.cancelled(env.task_id):  # the call was not made: the cancel ends it
            return
        self.log.warning("no valid task reading", task=env.task_id, error=error)
        self.reply(
            env,
            StepFailed(role=self.sender, step="perceive", error=f"no valid task reading: {error}"),
        )

    @handles(TaskRequest)
    def on_task_request(self, env: Envelope) -> None:
        body: TaskRequest = env.body
        reused = self.readings.spec(body.text)
        if reused is not None:  # the very same request, accepted: read as it was then
            self.reply(env, reused)
            return
        seen_files = self._listing()
        shown = "\n".join(seen_files) or "(empty)"
        request = LLMRequest(
            role=self.name,
            tier="brain",
            task_id=env.task_id,
            max_output_tokens=self.ctx.config.output_caps.perceiver,
            messages=[
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": f"Project files:\n{shown}\n\nRequest: {body.text}"},
            ],
        )
        answer = ask_structured(self.ctx.model(), request, PerceiverAnswer)
        if not answer.ok or answer.value is None:
            self._failed(env, answer.error)
            return
        question = bounded_question(answer.value.question)
        if question is not None and restates_request(question, body.text):
            question = None  # it would ask the user for the task's own answer
        if question is not None:  # ambiguous: the user settles it first
            question_id = self.ctx.new_id()
            self.asked[question_id] = (env, request, answer.value)
            timeout_s = self.ctx.config.question_timeout_s
            self.reply(env, user_question(question, question_id, self.sender, timeout_s))
            return
        self._read(env, msgspec.structs.replace(answer.value, question=None), seen_files)

    def _recorded(self) -> TaskSpec | None:
        """A rerun's logged reading: the workspace as the recorded run saw it (None live)."""
        recorded = self.ctx.recorded_verdicts
        return recorded.reading() if recorded is not None else None

    def _listing(self) -> list[str]:
        """The workspace entries the model is shown: the recorded run's in a rerun."""
        recorded = self._recorded()
        return list(recorded.listing) if recorded is not None else listing(self.ctx.workspace)

    @handles(QuestionAnswered)
    def on_question_answered(self, env: Envelope) -> None:
        body: QuestionAnswered = env.body
        asked = self.asked.pop(body.question_id, None)
        if asked is None or body.answer is None:  # not ours; or no answer: the task ends
            return
        request_env, request, first = asked
        if body.by != "operator":  # a default no one chose is the model's guess
            self._read(request_env, msgspec.structs.replace(first, question=None), self._listing())
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
            self._failed(request_env, answer.error)
            return
        self._read(
            request_env, msgspec.structs.replace(answer.value, question=None), self._listing()
        )

    def _read(self, env: Envelope, value: PerceiverAnswer, shown: list[str]) -> None:
        """The TaskSpec of a valid reading: what the workspace holds of its paths is
        looked up once and logged with it (``seen``, and the ``listing`` the model was
        shown) — in a rerun, as the recorded run saw it."""
        body: TaskRequest = env.body
        recorded = self._recorded()
        if recorded is not None:
            seen = dict(recorded.seen)
        else:
            store = (self.ctx.store,) if self.ctx.store else ()
            seen = look(
                self.ctx.workspace,
                looked_paths(body.text, value),
                tests=_has_tests(self.ctx.workspace, store),
            )
        spec = read_spec(body.text, value, seen)
        self.reply(env, msgspec.structs.replace(spec, listing=shown))
