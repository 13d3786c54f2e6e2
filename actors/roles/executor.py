"""R3 Executor — the plant of the fast loop: runs one subtask with tools.

Responsibilities:
    For one addressed SubTask, run a tool-calling loop with the tool-tier model: offer
    the tools (glob, read_file, write_file, shell, load_data and the host's, minus the
    blocked ones; ``load_data``, which reads back a result saved for being too large for
    the context, only from the model call after a call of the conversation gave one), run
    each call through the ToolRegistry (which confines files to the workspace, refuses
    blocked targets and gates Law 1), feed the
    results back as the registry gives them to the model (its notes too: a command not
    found whose ``…3`` sibling is installed is named), and stop at the model's final
    answer. A retry (CorrectionSignal) continues the same conversation with the
    validator's feedback (why the result was rejected); an ask for a second derivation
    (``corroborate``) starts a new conversation instead — the subtask alone, nothing of
    the first answer — whose calls carry ``ToolCall.conversation``: an independent
    derivation of the value, told only which methods the first one used, not to be
    repeated. Calls the Executor makes itself — code's, ``ToolCall.by == "code"`` — come
    first in an attempt, before the model's first turn, in the conversation as its own:
    the subtask's ``commands`` (the evaluation of the request's own call, written by the
    Planner, or a remembered plan's proven commands) on its first attempt; and, for a
    subtask carrying a ``tests`` criterion, the workspace's tests (``run_tests``) before
    its first attempt and again after any attempt that applied a change.
    A final answer loses any chat-template tool markup the model echoed into it
    (:func:`answer_text`). The subtask's
    prompt lists only the criteria a model judges: one that code checks is code's to
    decide, not the model's to word.

Input contract:
    SubTask and CorrectionSignal, both addressed ``to`` this pair. While an attempt runs,
    an Inbox (never dropping, joined at the attempt's cause) brings the
    ConfirmationDecisions it waits for and the task's end (FinalResult, TaskCancelled).

Output contract:
    ToolCallEnded for each tool call the moment it ends (the record, its place in the
    attempt, what the model was shown; one that changed the workspace is committed before
    the attempt goes on); ExecutionResult (with every structured ToolCall and ``stop``, why
    the attempt stopped); ConfirmationRequest for an irreversible action (Law 1); LLMCall
    for each model call.

Constraints:
    Does NOT judge its own output; does NOT query memory (its context comes from the
    Planner through SubTask.context); does NOT call a blocked tool or touch a blocked
    target; at most ``max_turns`` model turns per attempt; the same call three times in
    a row ends the attempt as a doom loop. A call the conversation already made (the same
    tool and arguments, :func:`request_key`) is not made again when it would give the
    same result — it gave one (a built-in file tool that worked, a command run in the
    sandbox that changed nothing) and the workspace has not changed since: refused
    (``repeated_call``), the model told in one line that its result is above. A call that
    changed the workspace, or whose changes are unknown (a command run outside the
    sandbox, a host's function), starts that record afresh; one that failed is the
    repeated-failure rule's. A retry continues the conversation, so the record spans its
    attempts; a second derivation (a new conversation) starts it empty. A call made the
    third time in the record, in a row or not, or two such refusals in a row, end the
    attempt as a doom loop (a small model cycled three ``echo`` commands for 24 calls,
    never one three times in a row; a policy-0 log from before this rule ran every
    repeated call). A tool that failed the same way twice in the subtask is not called a
    third time with the same kind of argument (refusal ``repeated_failure``: the tool is
    not run); two such refusals in a row end the attempt as a doom loop, and a retry does
    not offer a tool refused so (a small model repeats the
    refused call in every retry of the same conversation). Until an attempt's first tool call the
    model is asked for one (``tool_choice="required"``): an answer no tool result
    supports cannot be true but by luck, and a retry redoes the work; a retry after
    attempts that called no tool says so (``NO_TOOL_YET``).
    After each turn's tool results the model is told to answer if they do
    (``AFTER_RESULT``, a user message: small models otherwise repeat the call until the
    doom loop). In a fresh conversation asked for a second derivation, a call by a method
    the first conversation used to show the value (``CorrectionSignal.avoid``) is refused
    (``same_method``): the derivation is by another method, by code, not by the model's
    good will.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import msgspec

from artoo.actors.law1 import Scope
from artoo.actors.llm import LLMError, LLMRequest, assistant_message, tool_message
from artoo.actors.runtime.bus import BusError
from artoo.actors.runtime.role import Equipment, Inbox, Role, handles
from artoo.actors.tools import ConfirmationNeeded, ImageKeeper, ToolRegistry, ToolRunner
from artoo.actors.verification._paths import mentions
from artoo.actors.verification.derive import method
from artoo.schemas import (
    ConfirmationDecision,
    ConfirmationRequest,
    CorrectionSignal,
    Envelope,
    ExecutionResult,
    FinalResult,
    LLMCall,
    Message,
    StopReason,
    SubTask,
    TaskCancelled,
    ToolCall,
    ToolCallEnded,
    ToolSpec,
)

__all__ = [
    "AFTER_RESULT",
    "DOOM_REPEATS",
    "FAILURE_REPEATS",
    "NO_TOOL_YET",
    "Executor",
    "failure_kind",
    "first_commands",
    "gave_result",
    "is_doom_loop",
    "is_refusal_loop",
    "may_have_changed",
    "offered_tools",
    "repeated_call",
    "repeated_failure",
    "request_key",
    "runs_tests",
    "subtask_prompt",
]

DOOM_REPEATS = 3
PERSIST_WAIT_S = 5.0
"""How long an attempt waits for a workspace-changing tool call to be committed."""
_SAFE_NAME = re.compile(r"[^A-Za-z0-9_-]")

SYSTEM_PROMPT = """You are an Executor of artoo. Do the subtask with the tools offered, one
call at a time; paths are relative to the workspace. Never answer from memory: call a tool
first. Once a tool result answers the subtask, stop calling tools and reply in plain text that
starts with the answer (for a count, the number first). Report only what the tools returned;
never claim what you did not do."""

AFTER_RESULT = (
    "If that result answers the subtask, reply now in plain text, starting with the answer; "
    "if not, make the next tool call."
)
"""Said (a user message) after each turn's tool results; the results themselves are shown
as the tools gave them."""

NO_TOOL_YET = (
    "You have not called a tool yet, so nothing supports that answer. Call one of the tools "
    "to find it, then answer from its result."
)
"""Added to a retry's feedback when no attempt of the subtask has called a tool yet."""

_REPLIES: tuple[type[Message], ...] = (ConfirmationDecision, FinalResult, TaskCancelled)

SAME_METHOD = (
    "not run: this derivation must not repeat the first one's method; find the value "
    "another way (another tool, or another command)"
)
"""What a fresh conversation asked for a second derivation is told of a call by a method
the first conversation used to show the value (refusal ``same_method``)."""


def subtask_prompt(st: SubTask) -> str:
    """The user message that states a subtask (pure): its instruction, the request it
    serves, and from the reading that a question changes no file, or which files a change
    may write, create or delete (the scope Law 1 holds it to). Only the criteria a model
    judges are listed: one that code checks is not the model's to word."""
    parts = [f"Subtask: {st.instruction}"]
    if st.request and st.request.strip() != st.instruction.strip():
        parts.append(f"It serves the user's request: {st.request}")
    if st.kind == "question":
        parts.append("This is a question: answer it; change no file.")
    roles = {"write": "change", "create": "create", "delete": "delete"}
    read = [t.path for t in st.targets if t.role == "read"]
    if read:  # the reading's sources, as the workspace holds them
        parts.append("Files to read: " + ", ".join(read))
    named = [f"{roles[t.role]} {t.path}" for t in st.targets if t.role in roles]
    if named:  # the reading's targets: where a change may go (the scope gate's)
        parts.append("Files to change: " + "; ".join(named) + " (no other file).")
    judged = [c for c in st.criteria if c.check is None]  # code decides the others
    if judged:
        parts.append("Success criteria:\n" + "\n".join(f"- {c.text}" for c in judged))
    if st.context:
        parts.append(st.context)
    if st.blocked_tools or st.blocked_targets:
        parts.append("MUST NOT use: " + ", ".join([*st.blocked_tools, *st.blocked_targets]))
    return "\n\n".join(parts)


def caution_target(args: Mapping[str, Any], targets: Sequence[str]) -> str | None:
    """The caution target a tool call would use — a path argument equal to it, or a string
    argument (a shell command …) that names it — or None (pure)."""
    for target in targets:
        wanted = target.strip().removeprefix("./")
        for value in args.values():
            if isinstance(value, str) and (
                value.strip().removeprefix("./") == wanted or mentions(value, wanted)
            ):
                return target
    return None


def caution_ask(
    tool: str, args: dict[str, Any], target: str, st: SubTask, attempt: int
) -> ConfirmationNeeded:
    """What the operator is asked before the first use of a caution target (pure)."""
    return ConfirmationNeeded(
        tool=tool,
        args=args,
        target=target,
        action=f"{tool} on {target}",
        reason=(
            f"memory marks {tool} on {target} CAUTION (its outcomes were mixed): "
            "confirm its first use in this task"
        ),
        subtask_id=st.subtask_id,
        attempt=attempt,
    )


FAILURE_REPEATS = 2
"""A tool that failed the same way this many times is not called again with the same
kind of argument in the subtask."""


def failure_kind(tool: str, args: Mapping[str, Any]) -> tuple[str, ...]:
    """What "the same kind of argument" is for ``tool`` (pure): the tool and the names of
    its arguments — ``load_data(filename=…)`` on one missing name after another is one
    kind; for ``shell``, the program its command runs (two refused ``rm`` are one kind, an
    ``ls`` after them another)."""
    command = args.get("command") if tool == "shell" else None
    if isinstance(command, str):
        return (tool, command.split()[0] if command.split() else "")
    return (tool, *sorted(args))


def repeated_failure(failed: Sequence[ToolCall], repeats: int = FAILURE_REPEATS) -> str | None:
    """Why a call of a kind whose earlier calls ``failed`` is not made again, or None
    (pure): the last ``repeats`` of them failed the same way — the tool itself failed (not
    a command's exit code: a shell command that exits non-zero is a result) with the same
    refusal, if any. Decided from structured fields, never from the error text."""
    last = list(failed)[-repeats:]
    if len(last) < repeats:
        return None
    if any(c.ok or c.exit_code is not None for c in last):
        return None
    if len({c.refusal for c in last}) != 1:
        return None
    shown = ", ".join(json.dumps(c.args, sort_keys=True)[:60] for c in last)
    return (
        f"{last[0].tool} failed the same way {repeats} times with this kind of argument "
        f"({shown}): not called again; use another tool or answer from what you have"
    )


def request_key(tool: str, args: Mapping[str, Any]) -> tuple[str, str]:
    """What makes two calls the same call (pure): the tool and its arguments as the model
    gave them."""
    return (tool, json.dumps(args, sort_keys=True))


def is_doom_loop(calls: Sequence[Hashable], repeats: int = DOOM_REPEATS) -> bool:
    """True when the last call of ``calls`` (keys, :func:`request_key`) is made for the
    ``repeats``-th time in them, in a row or not (pure). Over the last ``repeats`` calls
    alone: the same call ``repeats`` times in a row."""
    return bool(calls) and list(calls).count(calls[-1]) >= repeats


def is_refusal_loop(calls: Sequence[ToolCall]) -> bool:
    """True when the last two calls were both refused as a repeated failure of one kind, or
    both as a repeated call (pure): the model repeats calls that will not be made, and
    nothing new can come of another turn."""
    last = list(calls)[-2:]
    if len(last) < 2:
        return False
    if all(c.refusal == "repeated_call" for c in last):
        return True
    return all(c.refusal == "repeated_failure" for c in last) and failure_kind(
        last[0].tool, last[0].args
    ) == failure_kind(last[1].tool, last[1].args)


_KNOWN_EFFECTS = frozenset({"read_file", "glob", "load_data", "write_file", "run_tests"})
"""Built-in tools whose result the workspace decides and whose every change to it is known
(``ToolCall.effects``); so is a command run in the sandbox. A command run outside it, or a
host's function, may have changed anything."""


def _effects_known(call: ToolCall) -> bool:
    return call.tool in _KNOWN_EFFECTS or (call.tool == "shell" and call.sandboxed)


def gave_result(call: ToolCall) -> bool:
    """The call ran, changed nothing and gave a result the workspace alone decides (pure): a
    built-in file tool that worked, or a command run in the sandbox (whatever its exit
    code). Made again with the workspace unchanged, it gives the same result. A call that
    failed is not one: the repeated-failure rule is its (:func:`repeated_failure`)."""
    return (
        call.refusal is None
        and (call.ok or call.exit_code is not None)
        and _effects_known(call)
        and not call.effects
    )


def may_have_changed(call: ToolCall) -> bool:
    """The call changed the workspace, or may have (pure): it was not refused and changed
    something, or what it changed is not known (a command run outside the sandbox, a host's
    function). A call made after it may give another result."""
    return call.refusal is None and (bool(call.effects) or not _effects_known(call))


def offered_tools(specs: Sequence[ToolSpec], *, spilled: bool) -> list[ToolSpec]:
    """The tools offered to a model call (pure): ``specs`` — without ``load_data`` until
    a result was saved for being too large (``spilled``). A small model with nothing
    saved called ``load_data`` on workspace files ("data/sales.csv") and on names from
    the tool's own docstring ("shell_3.txt"), every call failing."""
    return list(specs) if spilled else [s for s in specs if s.name != "load_data"]


_TEMPLATE_BLOCK = re.compile(
    r"<(tool_response|tool_call)>.*?(?:</\1>|\Z)|</?(?:tool_response|tool_call)>", re.S
)


def answer_text(content: str) -> str:
    """The answer a model's final message states (pure): without the chat template's
    tool markup it echoed — a ``<tool_response>…</tool_response>`` or
    ``<tool_call>…</tool_call>`` block (to the end when unclosed), or a lone such tag. A
    small model answered "HI! <tool_response> exit code: 0 --- stdout --- HI!
    </tool_response>", and its "tool_response" failed as a value no tool
    printed."""
    if "<tool_" not in content and "</tool_" not in content:
        return content
    return _TEMPLATE_BLOCK.sub(" ", content).strip()


def first_commands(st: SubTask) -> list[str]:
    """The commands a subtask's first attempt runs, in order, before the model's first
    turn (pure): the commands it carries (``SubTask.commands``), each once."""
    return list(dict.fromkeys(c for c in st.commands if c))


def runs_tests(st: SubTask) -> bool:
    """Whether the Executor runs the workspace's tests around a subtask's changes: it
    carries a ``tests`` criterion (pure)."""
    return any(c.check is not None and c.check.kind == "tests" for c in st.criteria)


def prescribed_message(
    call_id: str, args: Mapping[str, Any], tool: str = "shell"
) -> dict[str, Any]:
    """The assistant message of a call the Executor makes itself (pure; ``shell`` unless
    said): in the conversation as the model's own calls are, so the model reads its
    result as one."""
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": tool, "arguments": json.dumps(dict(args))},
            }
        ],
    }


def repeated_call(tool: str, args: Mapping[str, Any]) -> str:
    """What the model is told of a call it already made, not made again (pure; one line)."""
    shown = json.dumps(dict(args), sort_keys=True)[:60]
    return (
        f"you already made this call ({tool} {shown}) and its result is above: not run "
        "again; answer from that result or make a different call"
    )


@dataclass
class _Run:
    subtask: SubTask
    task_id: str
    cause: int
    messages: list[dict[str, Any]] = field(default_factory=list)
    attempt: int = 0
    called_tools: bool = False  # some attempt has made a tool call
    failed: dict[tuple[str, ...], list[ToolCall]] = field(default_factory=dict)
    """The failed calls of this subtask by :func:`failure_kind` (every attempt)."""
    refused: set[str] = field(default_factory=set)
    """Tools a call of which was refused as a repeated failure: not offered to a retry."""
    conversation: int = 0
    """Which conversation the attempts are in: a second derivation starts a new one."""
    made: list[tuple[str, str]] = field(default_factory=list)
    """The calls of this conversation (every attempt of it: their results are in it) that
    gave a result (:func:`gave_result`) since the workspace last changed, each repeat
    refused included, by :func:`request_key`."""
    spilled: bool = False
    """A call of this conversation (every attempt of it) gave a result too large for the
    context (``ToolCall.spill_ref``): from then on ``load_data`` is offered."""
    avoid: set[tuple[str, ...]] = field(default_factory=set)
    """In a fresh conversation asked for a second derivation: the methods the first used
    to show the value (``CorrectionSignal.avoid``), each refused (``same_method``)."""
    prescribed: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    """The calls ``(tool, args)`` the next attempt makes itself, in order, before its
    first model turn: the first attempt's (:func:`first_commands`, the tests before)."""


@dataclass
class _Attempt:
    """What one attempt hears from its inbox."""

    inbox: Inbox
    task_id: str
    decisions: dict[str, ConfirmationDecision] = field(default_factory=dict)
    ended: bool = False

    def take(self, env: Envelope) -> None:
        body = env.body
        if isinstance(body, ConfirmationDecision):
            self.decisions[body.request_id] = body
        elif isinstance(body, FinalResult) and body.task_id == self.task_id:
            self.ended = True
        elif isinstance(body, TaskCancelled) and env.task_id == self.task_id:
            self.ended = True

    def poll(self) -> bool:
        """Read what arrived without waiting; True once the task has ended."""
        for env in self.inbox.drain():
            self.take(env)
        return self.ended


def images_of(ctx: Equipment) -> ImageKeeper | None:
    """Where a registry keeps before-images: the store's blobs, each image at most
    ``Config.tools.undo_max_mb``; None without blobs."""
    if ctx.blobs is None:
        return None
    return ImageKeeper(ctx.blobs, int(ctx.config.tools.undo_max_mb * 1024 * 1024))


class Executor(Role):
    """The Executor actor (one per effector pair)."""

    name: ClassVar[str] = "executor"
    publishes: ClassVar[tuple[type[Message], ...]] = (
        ExecutionResult,
        ToolCallEnded,
        ConfirmationRequest,
        LLMCall,
    )
    consumes: ClassVar[tuple[type[Message], ...]] = ()
    addressed: ClassVar[tuple[type[Message], ...]] = (SubTask, CorrectionSignal)

    def __init__(self, equipment: Equipment, instance: str | None = None) -> None:
        super().__init__(equipment, instance)
        self.runs: dict[str, _Run] = {}
        self.cautioned: dict[str, set[str]] = {}  # task -> caution targets confirmed

    def active_tasks(self) -> list[str]:
        return sorted({r.task_id for r in self.runs.values()})

    def forget_task(self, task_id: str) -> None:
        for sid in [s for s, r in self.runs.items() if r.task_id == task_id]:
            del self.runs[sid]
        self.cautioned.pop(task_id, None)

    # ------------------------------------------------------------------ handlers
    @handles(SubTask)
    def on_sub_task(self, env: Envelope) -> None:
        st: SubTask = env.body
        run = _Run(subtask=st, task_id=env.task_id or "", cause=env.seq)
        run.messages = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": subtask_prompt(st)},
        ]
        run.prescribed = [("shell", {"command": c}) for c in first_commands(st)]
        if runs_tests(st):
            run.prescribed.append(("run_tests", {}))
        self.runs[st.subtask_id] = run
        self._attempt(run)

    @handles(CorrectionSignal)
    def on_correction_signal(self, env: Envelope) -> None:
        body: CorrectionSignal = env.body
        run = self.runs.get(body.subtask_id)
        if run is None:
            return
        run.cause = env.seq
        if body.corroborate:  # the answer passed; a second derivation is asked, afresh
            # a conversation that saw the first answer, or was told it, would repeat it
            run.conversation += 1
            run.avoid = {tuple(m) for m in body.avoid}
            run.made = []  # it has seen no result
            run.spilled = False  # nor a saved one's name
            run.messages = [
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": subtask_prompt(run.subtask) + "\n" + body.feedback},
            ]
            self._attempt(run)
            return
        feedback = f"The validator rejected the result: {body.feedback}"
        if not run.called_tools:
            feedback += "\n" + NO_TOOL_YET
        run.messages.append({"role": "user", "content": feedback})
        self._attempt(run)

    # ------------------------------------------------------------------ the loop
    def _runner(self, run: _Run, attempt: _Attempt, registry: ToolRegistry) -> ToolRunner:
        """The attempt's tool runner: the live registry, or what the catalog's ``runner``
        (replay) makes of it."""
        factory = self.ctx.tools.runner
        if factory is None:
            return registry
        return factory(
            registry,
            task_id=run.task_id,
            confirm=lambda needed: self._confirm(run, attempt, needed),
        )

    def _registry(self, run: _Run, attempt: _Attempt) -> ToolRegistry:
        reg = ToolRegistry(
            self.ctx.workspace,
            self.ctx.spill_dir / (_SAFE_NAME.sub("_", run.task_id) or "no-task"),  # per task
            # the store is never a tool's to touch, even when it lies in the workspace
            blocked_targets=(
                *run.subtask.blocked_targets,
                *((str(self.ctx.store.resolve()),) if self.ctx.store else ()),
                *(os.path.expanduser(p) for p in self.ctx.config.tools.hide),
            ),
            confirm=lambda needed: self._confirm(run, attempt, needed),
            shell_timeout_s=self.ctx.config.tools.shell_timeout_s,
            secrets=self.ctx.secrets,
            env_allow=self.ctx.config.tools.env_allow,
            context_limit=self.ctx.config.tools.context_limit,
            spill_limit=self.ctx.config.tools.spill_limit,
            sandbox=self.ctx.sandbox,
            images=images_of(self.ctx),
            scope=Scope.of(run.subtask),
            tests_timeout_s=self.ctx.config.tools.tests_timeout_s,
        )
        for fn in self.ctx.tools.host_tools:
            reg.register(fn)
        return reg

    def _attempt(self, run: _Run) -> None:
        # the mailbox is not read while an attempt runs: an inbox joined at the attempt's
        # cause brings the confirmations and the task's end, none dropped
        inbox = self.open_inbox(_REPLIES, from_seq=run.cause + 1)
        try:
            self._run_attempt(run, _Attempt(inbox, run.task_id))
        finally:
            self.close_inbox(inbox)

    def _run_attempt(self, run: _Run, attempt: _Attempt) -> None:
        run.attempt += 1
        st = run.subtask
        registry = self._registry(run, attempt)
        runner = self._runner(run, attempt, registry)
        blocked = set(st.blocked_tools)
        specs = [s for s in registry.specs() if s.name not in blocked]
        if st.tools:
            wanted = set(st.tools) | {"load_data"}
            specs = [s for s in specs if s.name in wanted] or specs
        specs = [s for s in specs if s.name not in run.refused]  # empty: answer from results
        calls: list[ToolCall] = []
        seen: list[tuple[str, str]] = []
        output, error = "", None
        stop: StopReason = "turn_cap"
        if run.prescribed and not attempt.poll():  # code's calls: made first, in order
            prescribed, run.prescribed = run.prescribed, []
            self._prescribe(
                run, attempt, runner, calls, seen, prescribed, f"artoo-run-{run.attempt}"
            )
            run.messages.append({"role": "user", "content": AFTER_RESULT})
        for _turn in range(self.ctx.config.max_turns):
            if attempt.poll():
                stop, error = "task_ended", "task ended"
                break
            offered = offered_tools(specs, spilled=run.spilled)
            request = LLMRequest(
                role=self.name,
                tier="tool",
                messages=list(run.messages),
                tools=offered,
                tool_choice="required" if offered and not calls else None,
                task_id=run.task_id,
                subtask_id=st.subtask_id,
                max_output_tokens=self.ctx.config.output_caps.executor,
            )
            try:
                response = self.ctx.model().complete(request)
            except LLMError as exc:
                stop, error = "model_error", f"model call failed: {exc}"
                break
            if not response.tool_calls:
                output = answer_text(response.content or "")
                run.messages.append({"role": "assistant", "content": output})
                stop = "answer"
                break
            run.messages.append(assistant_message(response))
            run.called_tools = True
            doom: str | None = None  # why the attempt is a doom loop
            ended = False
            for tc in response.tool_calls:
                if self._cancelled(run, attempt):  # no tool starts after a cancel
                    ended = True
                    break
                key = request_key(tc.name, tc.arguments)
                seen.append(key)
                call = self._made(run, attempt, runner, calls, key, tc.id, dict(tc.arguments))
                if is_refusal_loop(calls):
                    why = "call" if call.refusal == "repeated_call" else "failure"
                    doom = f"{tc.name} refused twice in a row as a repeated {why}"
                    break
                if is_doom_loop(seen[-DOOM_REPEATS:]):
                    doom = f"the same call {tc.name} {DOOM_REPEATS} times in a row"
                    break
                if run.made[-1:] == [key] and is_doom_loop(run.made):
                    doom = f"the same call {tc.name} made {DOOM_REPEATS} times"
                    break
            if ended:
                stop, error = "task_ended", "task ended"
                break
            if not doom:
                run.messages.append({"role": "user", "content": AFTER_RESULT})
            if doom:
                stop = "doom_loop"
                error = f"doom loop: {doom}"
                break
        else:
            error = f"turn cap reached ({self.ctx.config.max_turns} turns)"
        changed = any(c.ok and c.refusal is None and c.effects for c in calls)
        if runs_tests(st) and changed and stop != "task_ended" and not attempt.poll():
            # the workspace's tests after the change, by code: the proof compares them
            after: list[tuple[str, dict[str, Any]]] = [("run_tests", {})]
            prefix = f"artoo-tests-{run.attempt}"
            self._prescribe(run, attempt, runner, calls, seen, after, prefix)
        self.publish(
            ExecutionResult(
                subtask_id=st.subtask_id,
                round=st.round,
                attempt=run.attempt,
                ok=error is None,
                output=output,
                tool_calls=calls,
                error=error,
                stop=stop,
            ),
            task_id=run.task_id,
            to=self.instance,
            cause=run.cause,
        )

    def _prescribe(
        self,
        run: _Run,
        attempt: _Attempt,
        runner: ToolRunner,
        calls: list[ToolCall],
        seen: list[tuple[str, str]],
        made: Sequence[tuple[str, dict[str, Any]]],
        prefix: str,
    ) -> None:
        """Make ``made`` — ``(tool, args)`` — as calls of the Executor's own
        (``ToolCall.by == "code"``), in order, in the conversation as the model's calls
        are (:func:`prescribed_message`)."""
        for i, (tool, args) in enumerate(made):
            if i and self._cancelled(run, attempt):  # no tool starts after a cancel
                break
            call_id = prefix + (f".{i + 1}" if i else "")
            run.messages.append(prescribed_message(call_id, args, tool))
            run.called_tools = True
            key = request_key(tool, args)
            seen.append(key)
            self._made(run, attempt, runner, calls, key, call_id, args, by="code")

    def _made(
        self,
        run: _Run,
        attempt: _Attempt,
        runner: ToolRunner,
        calls: list[ToolCall],
        key: tuple[str, str],
        call_id: str,
        args: dict[str, Any],
        by: str = "",
    ) -> ToolCall:
        """Make one call of the attempt (:meth:`_call`), keep it in ``calls`` and the
        conversation, and log it as it ends; the record (``by``: who made it)."""
        call, content = self._call(run, attempt, runner, key, args)
        if run.conversation or by:
            call = msgspec.structs.replace(call, conversation=run.conversation, by=by)
        if call.spill_ref is not None:  # its file is named: load_data may read it
            run.spilled = True
        calls.append(call)
        run.messages.append(tool_message(call_id, content))
        self.publish(  # logged as it ends: its effects may be applied already
            ToolCallEnded(call=call, index=len(calls) - 1, shown=content, tool_call_id=call_id),
            task_id=run.task_id,
            cause=run.cause,
        )
        if call.effects and call.refusal is None:
            self._persist()  # what changed the workspace is in the log before we go on
        if call.refusal == "repeated_call" or gave_result(call):
            run.made.append(key)
        elif may_have_changed(call):
            run.made = []  # a call made again may give another result now
        return call

    def _call(
        self,
        run: _Run,
        attempt: _Attempt,
        runner: ToolRunner,
        key: tuple[str, str],
        args: dict[str, Any],
    ) -> tuple[ToolCall, str]:
        """One tool call: refused when its tool is blocked, it repeats a call the
        conversation made (:func:`repeated_call`), it is the third of a kind
        that failed, or its Caution target is denied, else run; the record and the text
        the model is shown."""
        st = run.subtask
        name = key[0]
        if name in st.blocked_tools:
            call = ToolCall(
                tool=name,
                args=args,
                ok=False,
                error=f"blocked tool {name} (MUST NOT)",
                subtask_id=st.subtask_id,
                attempt=run.attempt,
                refusal="blocked_tool",
            )
            return call, f"error: {call.error}"
        if key in run.made:
            # its result is in the conversation, and nothing changed since: the same again
            call = ToolCall(
                tool=name,
                args=args,
                ok=False,
                error=repeated_call(name, args),
                subtask_id=st.subtask_id,
                attempt=run.attempt,
                refusal="repeated_call",
            )
            return call, f"error: {call.error}"
        if run.conversation and method(name, args) in run.avoid:  # another method, by code
            call = ToolCall(
                tool=name,
                args=args,
                ok=False,
                error=SAME_METHOD,
                subtask_id=st.subtask_id,
                attempt=run.attempt,
                refusal="same_method",
            )
            return call, f"error: {call.error}"
        kind = failure_kind(name, args)
        repeated = repeated_failure(run.failed.get(kind, []))
        if repeated is not None:  # half the calls: the third of a kind that fails is not made
            run.refused.add(name)
            call = ToolCall(
                tool=name,
                args=args,
                ok=False,
                error=repeated,
                subtask_id=st.subtask_id,
                attempt=run.attempt,
                refusal="repeated_failure",
            )
            return call, f"error: {call.error}"
        refused = self._caution(run, attempt, name, args)
        if refused is not None:
            return refused, f"error: {refused.error}"
        outcome = runner.call(name, args, subtask_id=st.subtask_id, attempt=run.attempt)
        if not outcome.call.ok:
            run.failed.setdefault(kind, []).append(outcome.call)
        return outcome.call, outcome.content

    def _persist(self) -> None:
        """Wait (a bounded time) until the bus has committed what this role published: a
        tool call that changed the workspace is logged before the attempt goes on, so a
        process killed after it still has it. A failed bus is the System's to report."""
        try:
            self.ctx.bus.flush(timeout=PERSIST_WAIT_S)
        except BusError:
            pass

    def _cancelled(self, run: _Run, attempt: _Attempt) -> bool:
        """The task was cancelled: the host's cancel (known at once, through the gateway)
        or its end reached this attempt's inbox."""
        gateway = self.ctx.gateway
        return (gateway is not None and gateway.stopped(run.task_id)) or attempt.poll()

    # ------------------------------------------------------------------ Law 1 and Caution
    def _caution(
        self, run: _Run, attempt: _Attempt, tool: str, args: dict[str, Any]
    ) -> ToolCall | None:
        """The Caution gate (paper §6.4): the first use in a task of a target memory marks
        caution asks the operator; a refusal (a ToolCall) when denied, else None."""
        target = caution_target(args, run.subtask.caution_targets)
        confirmed = self.cautioned.setdefault(run.task_id, set())
        if target is None or target in confirmed:
            return None
        ask = caution_ask(tool, args, target, run.subtask, run.attempt)
        if self._confirm(run, attempt, ask, gate="caution"):
            confirmed.add(target)
            return None
        return ToolCall(
            tool=tool,
            args=args,
            target=target,
            ok=False,
            error=f"not confirmed: {tool} on {target}, which memory marks caution",
            subtask_id=run.subtask.subtask_id,
            attempt=run.attempt,
            refusal="caution_denied",
        )

    def _confirm(
        self, run: _Run, attempt: _Attempt, needed: ConfirmationNeeded, gate: str = "law1"
    ) -> bool:
        """Ask the operator (through the Queen) and wait for the one decision.

        The Queen always decides (a denial at the request's timeout, clock time); the wait
        also ends, as a denial, when the task ends or the bus stops."""
        request_id = self.ctx.new_id()
        self.publish(
            ConfirmationRequest(
                request_id=request_id,
                action=needed.action,
                reason=needed.reason,
                tool=needed.tool,
                args=dict(needed.args),
                target=needed.target,
                subtask_id=run.subtask.subtask_id,
                timeout_s=self.ctx.config.confirmation_timeout_s,
                gate=needed.gate or gate,
                effects=tuple(needed.effects),
            ),
            task_id=run.task_id,
            cause=run.cause,
        )
        while request_id not in attempt.decisions:
            if attempt.ended or self.ctx.bus.halted:
                return False
            env = attempt.inbox.get(timeout=1.0)
            if env is not None:
                attempt.take(env)
        return attempt.decisions.pop(request_id).approved
