"""How a task's answer was established — by code, or only on a model's word (equipment).

An honest verdict (issue 23): ``FinalResult.established`` says whether every criterion
that passed was proven by code. The GGS (through :class:`TaskGradient`, which ``artoo
replay --verify`` also runs) ends a task ``accept`` only when it was; a round whose
criteria all passed but some only on a model's verdict ends ``success`` at best — the
validating model is usually the executor's own small model, and its say-so is not
proof (Law 0).

What counts as proof, by the request's duties (:func:`.request.duties`):

- any criterion passed on a model's (or a person's) verdict → ``model``;
- a check of the answer's text (``output_contains`` / ``output_matches``) is never
  proof by itself: its expected value is the model's (often copied from the request, so
  an answer that repeats the question passes it);
- an answer to a question needs either a **code-computed** check that read the workspace
  and passed (``count_matches``, ``file_*``, a file's ``json_path_equals``) or **two
  independent derivations**: every value it states (numbers and code-like values) backed
  by a tool call that worked, and one of them by two different calls — a second,
  different command or tool agreeing with the first; one command's word (an ``awk``
  summing a column that does not exist prints ``0``) is not enough;
- a change or a creation needs a passed check of the workspace (``file_*``): its
  answer's "Done" proves nothing.

Pure: reads only the messages.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal

from artoo.schemas import Criterion, SubTaskOutcome, ToolCall, Verdict
from artoo.schemas.messages import Established

from .checks import reads_workspace
from .grounding import derivable, read_sources, stated_numbers, tool_outputs
from .request import code_values, duties, traced

__all__ = ["ESTABLISHED_TEXT", "derivations", "established", "how_established"]

ESTABLISHED_TEXT: dict[str, str] = {
    "code": "established by code (every criterion proven by code)",
    "model": "judged by a model (some of it not proven by code)",
    "none": "not established (not every criterion met)",
}
"""How ``FinalResult.established`` reads to a person (``artoo run``, replay, the report)."""


def how_established(value: str | None) -> str:
    """The words for a FinalResult's ``established`` (pure; empty for None, an older
    log)."""
    return ESTABLISHED_TEXT.get(value, value) if value else ""


_WORD = re.compile(r"[A-Za-z0-9_]+")


def derivations(value: str, calls: Sequence[ToolCall]) -> int:
    """How many different tool calls that worked back ``value`` (pure): a number as
    grounding derives it from that call's output alone, a code-like value by its words.
    Calls with the same tool and arguments count once."""
    number = stated_numbers(value)
    seen: set[tuple[str, str]] = set()
    count = 0
    for call in calls:
        key = (call.tool, repr(sorted(call.args.items())))
        if key in seen:
            continue
        outputs = tool_outputs([call], strict=True)
        if not outputs:
            continue
        if number:
            exact, _ = derivable(outputs)
            backed = Decimal(number[0].replace(",", "")) in exact
        else:  # a name: what the call returned, or the path it read
            backed = traced(value, [*outputs, *read_sources([call])])
        if backed:
            seen.add(key)
            count += 1
    return count


def established(
    *,
    request: str,
    kind: str,
    criteria: Mapping[str, Criterion],
    task_verdicts: Sequence[Verdict],
    outcomes: Iterable[SubTaskOutcome],
    output: str,
) -> Established | None:
    """How a round's answer was established (pure; the rule is the module's): ``none``
    when some verdict failed or none passed, ``model`` when some of it rests on a model,
    on one tool call or on a check copied from the request, ``code`` otherwise. None for
    a task read without a kind (a log from before ``TaskSpec.kind``)."""
    if not kind:
        return None
    outcomes = list(outcomes)
    verdicts = [*task_verdicts, *(v for o in outcomes for v in o.verdicts)]
    if not verdicts or not all(v.passed for v in verdicts):
        return "none"
    if any(o.status != "matched" for o in outcomes):
        return "none"
    if any(v.signal != "rule" for v in verdicts):
        return "model"
    measured = False
    for v in verdicts:
        criterion = criteria.get(v.criterion_id)
        check = criterion.check if criterion is not None else None
        if check is not None and reads_workspace(check):
            measured = True
    duty = duties(request, kind)
    if duty.answers and not measured:
        calls = [c for o in outcomes for c in o.tool_calls]
        values = [*stated_numbers(output), *code_values(output, request)]
        asked = set(_WORD.findall(request))
        values = [v for v in values if not set(_WORD.findall(v)) <= asked]
        backing = [derivations(v, calls) for v in values]
        if not values or min(backing) < 1 or max(backing) < 2:
            return "model"
    if duty.writes and not duty.answers and not measured:
        return "model"
    return "code"
