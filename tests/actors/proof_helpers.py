"""Builders for the proof tests: tool calls as the log holds them, and ``established``
for one outcome whose criteria all passed."""

from __future__ import annotations

from artoo.actors.verification.proof import Corroboration, established, needs_second_derivation
from artoo.schemas import Check, Criterion, SubTaskOutcome, ToolCall, Verdict


def _in(conversation: int) -> dict[str, int]:
    """``ToolCall.conversation`` when not the first (a call of the first conversation is
    built as it was before the field existed)."""
    return {"conversation": conversation} if conversation else {}


def shell_call(
    command: str,
    stdout: str,
    *,
    exit_code: int = 0,
    stderr: str = "",
    conversation: int = 0,
    **more: object,
) -> ToolCall:
    """A shell call that printed ``stdout`` (it worked when ``exit_code`` is 0)."""
    return ToolCall(
        tool="shell",
        args={"command": command, **more},
        ok=exit_code == 0,
        exit_code=exit_code,
        output_preview=f"exit code: {exit_code}\n--- stdout ---\n{stdout}",
        stdout=stdout,
        stderr=stderr or None,
        **_in(conversation),
    )


def read_call(path: str, text: str, *, conversation: int = 0, **more: object) -> ToolCall:
    """A ``read_file`` of ``path`` that returned ``text``."""
    return ToolCall(
        tool="read_file",
        args={"path": path, **more},
        target=path,
        output_preview=text,
        **_in(conversation),
    )


def criterion(kind: str, path: str, value: str | bool | None = None) -> dict[str, Criterion]:
    """One verifiable task criterion ``t1`` with this check."""
    check = Check(kind=kind, path=path, value=value)
    return {"t1": Criterion(id="t1", text="checked", mode="verifiable", check=check)}


def settle(
    request: str,
    kind: str,
    output: str,
    calls: list[ToolCall],
    criteria: dict[str, Criterion] | None = None,
    asked: str = "",
    shape: str = "",
) -> str | None:
    """``established`` for one outcome of ``calls`` whose criteria and request all passed
    (``asked``: the value its first conversation stated and was asked to derive again;
    ``shape``: the value an answer must state, as the model read it)."""
    criteria = criteria or {}
    verdicts = [Verdict(criterion_id=c, passed=True) for c in (*criteria, "request")]
    return established(
        request=request,
        kind=kind,
        criteria=criteria,
        task_verdicts=verdicts,
        outcomes=[SubTaskOutcome(subtask_id="s", output=output, tool_calls=calls, asked=asked)],
        output=output,
        shape=shape,
    )


def ask(request: str, output: str, calls: list[ToolCall], shape: str = "") -> Corroboration | None:
    """What :func:`needs_second_derivation` asks of a question's answer whose one
    (implicit) criterion passed, with no task criteria."""
    return needs_second_derivation(
        request=request,
        kind="question",
        criteria={},
        verdicts=[Verdict(criterion_id="done", passed=True)],
        calls=calls,
        output=output,
        shape=shape,
    )
