"""How a task's answer was established — by code, or only on a model's word (equipment).

An honest verdict (issue 23): ``FinalResult.established`` says whether every criterion
that passed was proven by code. The GGS (through :class:`TaskGradient`, which ``artoo
replay --verify`` also runs) ends a task ``accept`` only when it was; a round whose
criteria all passed but some only on a model's verdict ends ``success`` at best — the
validating model is usually the executor's own small model, and its say-so is not
proof (Law 0).

What counts as proof, by the request's duties (:func:`.request.duties`):

- any criterion passed on a model's verdict → ``model``; on a person's (the operator
  confirming a low-confidence verdict) → ``human``, which may end ``accept``;
- a check of the answer's text (``output_contains`` / ``output_matches``) whose value
  is copied from the request is not proof by itself — an answer that repeats the
  question passes it (:func:`copied_from_request`): without a check that read the
  workspace, such a task is ``model``;
- an answer to a question (:attr:`.request.Duties.answers`) needs either a
  **code-computed** check tied to its value (below) or **two independent derivations**:
  every value it states (numbers and code-like values; a name question's names, below)
  backed by a tool call that worked, and one of them by two different calls — a second,
  different command or tool agreeing with the first; one command's word (an ``awk``
  summing a column that does not exist prints ``0``) is not enough;
- an answer to a question that asks for a name (the duties' shape ``name``: which …,
  the name of …; the model's reading, ``TaskSpec.shape``, where code sees none) states
  its names too (:func:`.request.named_values`: a capitalised word inside a sentence, a
  word in markdown emphasis; none the request holds, no stop word), each backed as a
  code-like value is — its words in what a call returned or the path it read: a name no
  tool printed is never backed, and one read off a file counts twice only when a fresh
  conversation states it again. "What is the name of the class in src/shapes.py that has
  a radius?" answered "… is Circle." once stated no value the proof could see: nothing
  was asked, and it ended ``success`` however right. The value two calls back must then
  be a name: "**drill**, priced at 89" with its price printed twice and its name read
  once proves the price, not the item asked for; and a name question answered without a
  stated name is not proven by a figure it states, nor is a second derivation of the
  figure asked for — "which item … is the most expensive?" answered "The most expensive
  item is the hammer, with a price of 15." (a lowercase name, no value the proof sees)
  once ended ``accept`` on its 15, read off the same listing in two conversations;
- a zero is never the value derivations prove (:func:`_primary`): 0 is what a command
  prints over nothing — a column that holds no numbers, a pattern that matches no line,
  a missing file — so two different wrong commands agree on it ("what is the sum of the
  qty column in data/inventory.csv?" answered 0 once ended ``accept`` on two awks that
  summed the item names and the categories, each printing 0; the sum was 327). Only a
  code check tied to it proves a zero; with none, nothing is asked and the answer rests
  on the model's word;
- a number is backed by a result that prints it (standing alone); a count or sum code
  derives from a result (its lines, the lines holding a word of the request, a column's
  sum) backs it only when that result is a listing (more than three lines: a file, a
  table) or prints no number — a short result that prints a number backs only the
  numbers it prints (``wc -l``'s "6 data/scores.csv" once "backed" a count of 1, its one
  line) — and a zero only when a result prints it (the count of anything absent is 0).
  A result is what the workspace gave the call (:func:`.grounding.tool_outputs`: a
  command's stdout, another built-in tool's ``ToolCall.content``), never a note the tool
  adds around it: a fresh conversation's ``read_file`` at ``offset=1024``, past the end
  of a 54-character file, returned only "… Use read_file(path=…, offset=0) to read it."
  and its ``0`` once backed an awk's wrong total of 0 a second time;
- a count backs a number only when the request asks to count (how many, number of,
  count — not a total or an amount: a sum is no count): what code counts in a result
  (its lines, its non-empty lines, its words, the lines holding a word of the request;
  ``ls`` naming one file counts 1) backs nothing else, and what a counting command
  prints (:func:`_counts_lines`: ``wc -l``, ``wc -w``, ``grep -c`` as its last stage) is
  its word alone, never a second derivation; the other numbers a result prints, its
  total and its columns' sums back any number. "What is the total of the amount column
  in data/sales.csv?" answered 5, the file's line count, once had it backed twice, by
  ``wc -l``'s 5 and by the five lines of the file read (the total is 4250); "what is the
  sum of the qty column in data/inventory.csv?" answered 1 once ended ``accept`` on
  ``grep -c 'qty'``'s 1 (the header, the one line holding "qty") and the file read,
  whose rows print a price of 1 (the sum is 327) — the file's 1 is one derivation, and a
  second is asked for;
- a call whose arguments already state the number (:func:`_given`: ``echo 18``,
  ``printf 18``, ``python3 -c "print(18)"``) does not back it, whatever it prints:
  a command that prints a number it was given derives nothing — asked to compute with a
  tool a value no result showed, a model could run ``echo 18`` (``# data/x.csv`` added
  to name the path the request names) and have it count as a derivation of 18;
- derivations that disagree prove nothing: a subtask asked to derive a value again that
  ends on an answer not stating it is not proven, whatever else backs that answer (5
  from ``wc -l``, then 4250 read off the file and asked about, then 5 again: the
  file's five lines and the command's 5 once backed the wrong 5 twice); nor is a round
  whose subtasks were asked about different values (:func:`_asked_apart`: three
  subtasks, each answering the whole question, asked about 8, 8 and 0, once merged
  into "8. 8. 0." and ended ``accept`` on the 8 three row counts backed — the sum asked
  for was 327);
- a value read off listings counts once, however often it is read; only the value a
  conversation stated and was last asked to derive again (``SubTaskOutcome.asked``)
  counts once per conversation that read listings (``ToolCall.conversation``) — a
  fresh conversation that read and stated it again is a second, independent reading,
  but backs no other value, and for a request that asks which item holds an extreme
  (the largest, the smallest …) only a name on a line holding a column's largest or
  smallest value ("src/shapes.py" once ended ``accept`` on two glob listings
  after a first conversation that had stated a count of 6); one that did not state it
  again — the subtask ended on the answer asked about because the attempt after the ask
  failed or answered nothing (:func:`_fell_back`) — is no second reading (a count of 6,
  the files a glob listed, once ended ``accept`` on the same glob read in a fresh
  conversation that answered 5);
- a change or creation (the model and code agree: :attr:`.request.Duties.writes`, not
  ``unsure``) needs a check that passed and read back what a file the task changed
  holds (an applied effect of one of its tool calls: Law 1's observed effects; that a
  file exists is not what it holds — a "copy" of README.md holding one made-up line
  once ended ``accept`` on ``file_exists``; a removal's ``file_exists`` = false is
  enough) — or, ``Config.read_back_by_effect`` on (off for a log from before it), is
  **read back by effect** (:func:`read_back_by_effect`): what Law 1 observed the task's
  calls (this round's and earlier rounds') change, each text file's lines removed and
  added (``FileEffect.diff``), is the change the request asks for — every file changed
  one the request names, created or modified; every word of every line added or removed
  a word of the request (no collateral change, no value it does not state: a count the
  model worked out and wrote is not read back so, nor is a changed line whose other
  words the request does not hold) — save, ``Config.read_back_in_place`` on (off for a
  log from before it), a line changed in place whose words were replaced: its words
  that changed are the request's, one gone that is no number locates it, and the words
  gone come before the words come in the request ("rename the function shout to yell
  in src/textutil.py" is read back from ``def shout(text: str) -> str:`` → ``def
  yell(text: str) -> str:``; the east row's 800 → 850 is still not the west row's,
  nor blue → red "change red to blue"); every text it quotes ('…', "…", `…`) in an
  added line, verbatim; a line that holds a word changed. A deletion, a link, a mode change, a
  binary or oversized file (no diff, as in a log from before the field), a wrong write
  put right later, and a call whose changes were not observed (a command run outside
  the sandbox, a host's function that worked) are not read back;
  ``FinalResult.established_by`` says when a change was proven so ("read back by
  effect: notes/todo.txt +1 line, every changed word in the request"). With neither,
  its "Done" is only the model's word → ``model`` (a failed command answered "done" once
  passed every rule and ended ``accept`` with the file untouched; a check of the file
  the task read, not the one it was to write, proves nothing about the write);
- a request whose kind is unsure because the model's reading and code's disagree, or
  because the model gave no valid kind (``unknown``: it may be a question or a change;
  "make a copy of README.md named README.bak", read with no kind, once ended ``accept``
  on "Done." and an unchecked write; an older log with no kind at all is not judged)
  is held to both: with no such read-back (by a check or by effect), it must be a
  question answered with backed values (below) and must have changed nothing — "read
  the VERSION … and write it to VERSION.txt", read as a question, once ended
  ``accept`` on a reply that stated nothing and wrote no file;
- a code check proves a question's answer only when it ties to the value the answer
  states: ``count_matches`` measures the number a request that asks to count (how many,
  number of, count — not a total or an amount) must state; a ``table_value`` that
  computed a value computes the question's own answer (one that computed nothing,
  ``checks.computed`` false, is as if absent); a file check (or a count,
  for anything else) tests the workspace, not the answer — "what does src/app.py
  print?" once ended ``accept`` on a line count that ``count_matches`` proved, with a
  printed text the model made up. Every question is held to this, whatever shape of
  answer the model read: "What is the highest price …?", its shape read as free text,
  once ended ``accept`` on a CSV row one wrong command printed. A count in a plain unit
  other than files (lines, words …) over several files — a directory or a glob, as the
  check's logged observation reports (a glob, not yet measured) — ties no how-many
  request: it sums the files, and the question may ask about one of them ("find the
  file under src that defines the class Circle and tell me how many lines it has" once
  ended ``accept`` on 49, the lines of the six files under src; the file has 22); a
  count of the files a directory holds still ties;
- a value is backed only by a call that read a place the request names, when it names
  one (a workspace path): "how many python files are under src/models?" once ended
  ``accept`` on 3, which ``find src -type f`` and ``find src -name '*.py'`` agreed on —
  two derivations of another question (src holds 3, src/models 1);
- an answer to a question that states what a ``shell`` call printed that ran the
  request's own code (:func:`._evaluation.evaluates`: ``python3 -c`` importing only from
  Python files the request names and printing one expression of its names and constants,
  the call it writes when it writes one; or ``python3 FILE`` for what a named script
  prints) is proven by that call alone (``Config.proof_by_evaluation``; off for a log from
  before it): the workspace's code computed the value, and the command only asked it to —
  "what does greet … return when called with "Ana"?" answered right off the source, then
  off ``echo hello Ana``, once ended ``success`` with nothing run;
- anything else that passed only by rules is established by code.

One derivation asks for a second (:func:`needs_second_derivation`): an attempt whose
verdicts all passed, held to back a question's values, that states values each backed by
one tool call and none by two is not given on yet; the Agent-Validator asks the Executor
to derive the value again, in a fresh conversation, with a different command or tool —
and once more about a new value when the fresh conversation states another one
(``Config.corroborate_asks``, two by default). Nothing is assumed of the answer that
comes back: the rules above decide it — two different calls agreeing on its value are
proof, a repeated call or a second value is not. An attempt whose verdicts all passed,
held to back a question's values, that states a value no tool call backs (grounding
passed it — a mean of a column rounded — but no result shows it: "what is the mean …?"
answered right off a ``read_file`` once ended ``success``, nothing asked) is asked to
compute it with a tool that prints it (a :class:`Corroboration` with no call;
``Config.corroborate_unbacked``), in the same conversation — one of the
``corroborate_asks`` asks; shown by one call then, it is asked about again, afresh, as
any value one call backs. Should the attempt asked fail, or pass without answering the
request (it states no asked-for value: ``Config.corroborate_keeps_answer``), the answer
asked about stands (``agent_validator.corroboration_fallback``) with every call of the
subtask and the value asked about, and the same rules decide it.

Pure: reads only the messages.
"""

from __future__ import annotations

import fnmatch
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal

import msgspec

from artoo.schemas import Check, Criterion, SubTaskOutcome, ToolCall, Verdict
from artoo.schemas.messages import Established

from ._counting import parse_unit, spans_files
from ._evaluation import evaluated, evaluates, evaluation_command, evaluation_pattern
from ._guards import _counts_unit
from ._lines import diff_sides, lines_read_back
from ._paths import mentions
from .checks import COMPUTED_KINDS, computed, reads_workspace
from .grounding import _LINE_NUMBER, derivable, read_sources, stated_numbers, tool_outputs
from .request import (
    _FIGURE,
    change_words,
    code_values,
    duties,
    named_values,
    request_paths,
    traced,
)

__all__ = [
    "ESTABLISHED_TEXT",
    "Corroboration",
    "changed_paths",
    "copied_from_request",
    "derivations",
    "established",
    "established_and_note",
    "how_established",
    "needs_second_derivation",
    "read_back_by_effect",
    "read_back_note",
    "unchanged",
]

ESTABLISHED_TEXT: dict[str, str] = {
    "code": "established by code (every criterion proven by code)",
    "model": "judged by a model (some of it not proven by code)",
    "human": "judged by a person (some of it confirmed by the operator)",
    "none": "not established (not every criterion met)",
}
"""How ``FinalResult.established`` reads to a person (``artoo run``, replay, the report)."""


def how_established(value: str | None, by: str = "") -> str:
    """The words for a FinalResult's ``established`` (pure; empty for None, an older
    log), with ``by`` (``FinalResult.established_by``: the rule that proved it, in
    words) after them when given."""
    if not value:
        return ""
    text = ESTABLISHED_TEXT.get(value, value)
    return f"{text} — {by}" if by else text


_WORD = re.compile(r"[A-Za-z0-9_]+")
_HOW_MANY = re.compile(r"\bhow\s+many\b|\bnumber\s+of\b|\bcount\b", re.I)
_LEAST = re.compile(r"\b(?:least|smallest|lowest|fewest|minimum|min|cheapest|shortest)\b", re.I)
_MOST = re.compile(r"\b(?:most|largest|highest|biggest|greatest|maximum|max|longest)\b", re.I)
_EXTREME = re.compile(rf"{_LEAST.pattern}|{_MOST.pattern}|\b(?:oldest|newest)\b", re.I)
"""A request that asks which item holds an extreme of some measure: the smallest
(``_LEAST``), the largest (``_MOST``), or either (``oldest``, ``newest``: dates or
ages)."""
_DERIVED_WRITE = re.compile(
    r"\b(?:write|save|put|store|record|append|copy)\s+"
    r"(?:it|them|its\s+\w+|their\s+\w+|the\s+(?:count|number|total|sum|result|answer|"
    r"value|name|names|mean|average|maximum|minimum))\b",
    re.I,
)
"""A request that asks to write a value it does not state ("write its name to top.txt",
"write the count to todo_count.txt"): not read back by its own words."""
"""A request that asks to count (not a total or an amount: a sum is no count)."""
_TERM = re.compile(r"[A-Za-z_][\w-]{1,}")


def copied_from_request(check: Check, request: str) -> bool:
    """True when ``check`` tests the answer's text for words the request already holds
    (pure): an ``output_contains`` / ``output_matches`` whose value's words all occur in
    the request — an answer that merely repeats the question passes it."""
    if check.kind not in ("output_contains", "output_matches") or check.value is None:
        return False
    words = set(_WORD.findall(str(check.value).lower()))
    return bool(words) and words <= set(_WORD.findall(request.lower()))


def derivations(
    value: str, calls: Sequence[ToolCall], request: str = "", asked: Iterable[str] = ()
) -> int:
    """How many different tool calls that worked back ``value`` (pure): a number as
    grounding derives it from that call's output alone (its lines, words and the lines
    holding a word of the ``request`` counted only when the request asks to count: how
    many, number of, count; else a counting command's count is no second derivation), a
    code-like value by its words. Calls with the same tool and arguments count once (a
    shell command by its text: ``timeout_s`` aside); where the request names workspace
    paths, only calls whose arguments name one of them (or a path under one) count. A
    number is backed by a result that prints it, or one code derives from a listing
    (:func:`_printed`). A value the model read off listings (results of
    more than three lines: a file, a table) counts once — and once per conversation that
    read them (``ToolCall.conversation``) when it is the value ``asked`` about: the first
    conversation stated it, and a fresh one, which saw nothing of that answer, read and
    stated it again (self-consistency); a listing of a conversation that stated another
    value is no reading of this one. The same command that computed a value (a short
    result) counts once however often it runs — its error would repeat. A call whose
    arguments already state the number (:func:`_given`) backs it in no way: ``echo 18``
    printed what it was given (:func:`_backers`)."""
    return len(_backers(value, calls, request, asked))


def _backers(
    value: str, calls: Sequence[ToolCall], request: str, asked: Iterable[str] = ()
) -> list[ToolCall]:
    """The different tool calls that back ``value`` (:func:`derivations`), first of each
    (tool, arguments) in call order.

    A number is never backed by a call whose arguments already state it — the same value
    as a number standing alone in them (:func:`_given`; ``18.0`` and ``1,800`` read as
    values): ``echo 18``, ``printf 18``, ``python3 -c "print(18)"`` and
    ``echo 18  # data/x.csv`` print a number they were given, which is no derivation of
    it, neither by what they print nor by what code derives from it. The rule excludes
    some calls that did derive: ``head -n 5 data/x.csv`` shows five lines, a count of 5
    it no longer backs (it does not print "5"; the 5 was chosen, not found), and
    ``awk -F, '$3 > 80' …`` that prints a row holding 80 no longer backs 80 — acceptable:
    a count or threshold the command was given is not a result it derived, and the value
    is still backed by any other call that derives it (a second derivation is asked for
    where one call is missing). A column reference (``$3``) or a digit inside a word or
    an option (``-n5``, ``v2``, ``todo2.txt``) states no number. Names keep their rule:
    a name a call was told to read (its path) is traced to it.

    For a request that asks which item holds an extreme (``_EXTREME``: most, largest,
    smallest, lowest …), a listing backs a name only from a line that holds the smallest
    value of one of its columns when the request asks for the smallest (``_LEAST``), the
    largest when it asks for the largest (``_MOST``), either when it asks for both or
    neither (:func:`_extreme_lines`): a list of the
    candidates names every one of them ("which region has the smallest amount in
    data/sales.csv?" answered "east" once ended ``accept`` on the region column listed,
    and a one-line ``sort | head -n 1`` of the names).

    A count backs a number only when the request asks to count (``_HOW_MANY``). Else
    what code counts in a result — its lines, non-empty lines, words, the lines holding a
    word of the request (``derivable``'s ``counts``) — backs nothing, and what a counting
    command prints (:func:`_counts_lines`: ``wc -l``, ``grep -c``) backs the value only
    where no other call does, and as one call whatever the counters: its word alone, so
    a second derivation is asked for, not an unbacked value to be shown (its result does
    show it), and never a second derivation. A total of 5 once had the five lines of the
    file read as a second derivation of the line count ``wc -l`` printed; a sum of 1 once
    ended ``accept`` on ``grep -c 'qty'``'s 1 and a file read printing a price of 1. The
    other numbers a result prints, its total and its columns' sums back any number, as
    before.

    A ``read_file`` is a reading of a file however it is paged: its pages count as one
    listing does. "what is the value of VERSION in src/config.py?" answered 2 once ended
    ``accept`` on the 2 of ``return n % 2 == 0``, printed by the whole file read and by a
    20-character page of it, ``" 2 == 0"``, as two calls.

    A ``glob``'s result is a list of paths: it backs a number only for a request that
    counts files ("how many python files …"). "find the file under src that defines the
    class Circle and tell me how many lines it has" once ended ``accept`` on 6, the paths
    ``src/**/*.py`` matched (its "6 match(es)"), read in two conversations; the file has
    22 lines."""
    terms = list(dict.fromkeys(_TERM.findall(request)))[:40]
    number = stated_numbers(value)
    paths = request_paths(request)
    agreed = _norm_value(value) in {_norm_value(a) for a in asked}
    counts = bool(_HOW_MANY.search(request))  # a listing's counts answer only a count
    files = _counts_unit("files", request)
    extreme = bool(_EXTREME.search(request))
    least, most = bool(_LEAST.search(request)), bool(_MOST.search(request))
    ends = (least or not most, most or not least)  # (the smallest, the largest)
    seen: set[tuple[str, ...]] = set()
    found: list[ToolCall] = []
    for call in calls:
        if paths and not _reads_named(call, paths):
            continue  # it read another place than the request names
        outputs = tool_outputs([call], strict=True)
        if not outputs:
            continue
        key = _call_key(call)
        listing = _listing(outputs)
        if listing or call.tool == "read_file":  # the model read the value off it: its
            # reading is the derivation, however the file was paged
            key = ("listing", str(call.conversation) if agreed else "")
        if key in seen:
            continue
        if number:
            if call.tool == "glob" and not files:
                continue  # a list of paths counts files, and the request counts no files
            wanted = Decimal(number[0].replace(",", ""))
            if wanted in _given(call):
                continue  # it printed a number it was given: no derivation of it
            printed = _printed(outputs)
            derived = listing or not printed  # a listing, or a list of names: count it
            backed = wanted in printed or (
                derived and wanted != 0 and wanted in derivable(outputs, terms, counts=counts)[0]
            )
        elif extreme and listing:  # which one holds an extreme: read off its line only
            backed = traced(value, _extreme_lines(outputs, ends))
        else:  # a name: what the call returned, or the path it read
            backed = traced(value, [*outputs, *read_sources([call])])
        if backed:
            seen.add(key)
            found.append(call)
    if number and not counts:  # a count a command printed: its word alone, never a second
        return [c for c in found if not _counts_lines(c)] or found[:1]
    return found


_STAGES = re.compile(r"\|\|?|&&|;|\n")
"""What separates a shell command's stages: a pipe, a list (``;``, ``&&``, ``||``)."""
_GREPS = frozenset({"grep", "egrep", "fgrep", "rg"})


def _counts_lines(call: ToolCall) -> bool:
    """Whether ``call`` is a command whose output is a count (pure): its last stage a
    ``wc`` of lines or words (``-l``, ``-w``, ``--lines``, ``--words``; not ``-c``, a
    size) or a ``grep -c`` (``--count``, an option holding ``c``: ``-ic``). What it prints
    is a count of lines or words, whatever it was told to match — a derivation only of
    what a request that counts asks (:func:`_backers`). Read from the command's text: a
    count made another way (``awk 'END {print NR}'``, ``sed -n '$='``, a script) is not
    seen."""
    command = call.args.get("command") if call.tool == "shell" else None
    if not isinstance(command, str):
        return False
    stages = [s for s in _STAGES.split(command) if s.strip()]
    words = stages[-1].split() if stages else []
    if not words:
        return False
    options = [w for w in words[1:] if w.startswith("-")]
    if words[0] == "wc":
        short = [o[1:] for o in options if not o.startswith("--")]
        long = [o for o in options if o.startswith("--")]
        if not short and not long:
            return False  # lines, words and bytes: a size among them
        return all(o and set(o) <= {"l", "w"} for o in short) and all(
            o in ("--lines", "--words") for o in long
        )
    if words[0] in _GREPS:
        return any(
            o == "--count" or (not o.startswith("--") and o[1:].isalpha() and "c" in o[1:])
            for o in options
        )
    return False


def _call_key(call: ToolCall) -> tuple[str, ...]:
    """What makes two calls the same derivation (pure): a shell command's text, spacing
    aside (its ``timeout_s`` is not another command); a file read by its path (another
    page of it is no other derivation); else the tool and its arguments."""
    command = call.args.get("command") if call.tool == "shell" else None
    if isinstance(command, str):
        return (call.tool, " ".join(command.split()))
    path = call.args.get("path") if call.tool == "read_file" else None
    if isinstance(path, str):
        return (call.tool, path.strip().removeprefix("./"))
    return (call.tool, repr(sorted(call.args.items())))


_RESULT_LINES = 3
"""A tool result of more lines than this is a listing the value stands in (a file, a
table), not a value a command computed."""


def _extreme_lines(outputs: Sequence[str], ends: tuple[bool, bool]) -> list[str]:
    """The lines of a result that hold the smallest (``ends[0]``) or the largest
    (``ends[1]``) value of one of its columns — the k-th number of every line that has
    one, in at least two lines (pure): where a name that holds an extreme is read off a
    table."""
    columns: dict[int, list[tuple[Decimal, str]]] = {}
    for output in outputs:
        for line in output.splitlines():
            for k, token in enumerate(_LINE_NUMBER.findall(line)):
                columns.setdefault(k, []).append((Decimal(token), line))
    lines: list[str] = []
    for column in columns.values():
        if len(column) < 2:
            continue
        wanted = {
            *([min(v for v, _ in column)] if ends[0] else []),
            *([max(v for v, _ in column)] if ends[1] else []),
        }
        lines += [line for v, line in column if v in wanted]
    return lines


def _listing(outputs: Sequence[str]) -> bool:
    """Whether the result is a listing (pure): more than ``_RESULT_LINES`` non-empty lines."""
    return sum(1 for o in outputs for line in o.splitlines() if line.strip()) > _RESULT_LINES


def _printed(outputs: Sequence[str]) -> set[Decimal]:
    """The numbers a tool result prints, standing alone (pure: not the 0 of ``v0``). What
    code derives from a result — its line count, the lines holding a word of the request,
    a column's sum — backs a value only from a listing (more than three lines) or a
    result that prints no number (``ls`` naming one file counts 1 — for a request that
    asks to count: a count backs nothing else, :func:`_backers`): a short result that
    prints a number says that number (``wc -l``'s "6 data/scores.csv" once "backed" a
    count of 1, its one line), and a zero is the count of anything absent (a read of
    data/sales.csv once "backed" an awk's wrong total of 0)."""
    return {Decimal(m.group().replace(",", "")) for o in outputs for m in _ALONE.finditer(o)}


_ALONE = re.compile(r"(?<![\w.])(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?!\w)")


_GIVEN = (
    re.compile(r"(?<![\w.$])\d+(?:\.\d+)?(?!\w)"),
    re.compile(r"(?<![\w.$])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?!\w)"),
)
"""A number an argument states, standing alone: a digit run, decimal or in ``1,234``
groups (``1,180`` read both as 1180 and as 1 and 180) — not ``$3`` (a column an awk
reads), nor a digit inside a word, an option or a decimal (``-n5``, ``v2``, ``.5``)."""


def _given(call: ToolCall) -> set[Decimal]:
    """The numbers ``call``'s arguments state (pure): every number standing alone in its
    text arguments (a shell command, a path, a script), and every number argument
    (``limit``: 5) — what it was given, so what it prints of them it did not derive
    (:func:`_backers`). Each text is read as it is, not as JSON: a script's line that
    begins with 18 is ``\\n18`` in JSON, no number standing alone. A shell command's
    ``timeout_s`` is how it runs, not what it was given (as in :func:`_call_key`)."""
    found: set[Decimal] = set()
    stack: list[object] = [v for k, v in call.args.items() if k != "timeout_s"]
    while stack:
        arg = stack.pop()
        if isinstance(arg, str):
            found.update(
                Decimal(m.group().replace(",", "")) for p in _GIVEN for m in p.finditer(arg)
            )
        elif isinstance(arg, bool):
            continue
        elif isinstance(arg, int | float) and math.isfinite(arg):
            found.add(Decimal(str(arg)))
        elif isinstance(arg, Mapping):
            stack.extend(arg.values())
        elif isinstance(arg, list | tuple):
            stack.extend(arg)
    return found


def _norm_value(value: str) -> str:
    return value.strip().strip("`'\"").strip()


def _reads_named(call: ToolCall, paths: Sequence[str]) -> bool:
    """Whether ``call``'s arguments name one of the request's ``paths`` (or a path under
    one): ``find src -name '*.py'`` does not read ``src/models``."""
    text = json.dumps(call.args, ensure_ascii=False)
    return any(mentions(text, p) for p in paths)


def established(
    *,
    request: str,
    kind: str,
    criteria: Mapping[str, Criterion],
    task_verdicts: Sequence[Verdict],
    outcomes: Iterable[SubTaskOutcome],
    output: str,
    shape: str = "",
    by_effect: bool = True,
    in_place: bool = True,
    earlier: Sequence[ToolCall] = (),
    evaluation: bool = True,
    named_read: bool = False,
    unit_count: bool = False,
) -> Established | None:
    """How a round's answer was established (pure; the rule is the module's): ``none``
    when some verdict failed or none passed, ``model`` when some of it rests on a model,
    on one tool call or on a check copied from the request, ``code`` otherwise. None for
    a task read without a kind (a log from before ``TaskSpec.kind``). ``shape`` is the
    value an answer must state as the model read it (``TaskSpec.shape``; code's reading
    wins, :func:`.request.duties`): a name question's answer states its names too.
    ``by_effect`` (``Config.read_back_by_effect``; off for a log from before it): a
    change may be read back by what Law 1 observed it changed
    (:func:`read_back_by_effect`), over the round's calls and ``earlier``, the calls of
    the task's earlier rounds (their changes are the task's too); ``in_place``
    (``Config.read_back_in_place``; off for a log from before it): a line changed in
    place is read back by the words that changed; ``evaluation``
    (``Config.proof_by_evaluation``; off for a log from before it): a question's answer
    stating what a call that ran the request's own code printed is proven by it
    (:func:`._evaluation.evaluated`); ``unit_count`` (``Config.unit_count_phrase``; off
    for a log from before it): a request that names its unit before "count" ("the line
    count of src/app.py") counts it, and a ``count_matches`` of that unit ties to it."""
    if not kind:
        return None
    outcomes = list(outcomes)
    verdicts = [*task_verdicts, *(v for o in outcomes for v in o.verdicts)]
    if not verdicts or not all(v.passed for v in verdicts):
        return "none"
    if any(o.status != "matched" for o in outcomes):
        return "none"
    if any(v.signal == "llm" for v in verdicts):
        return "model"
    checks = _checks(criteria, verdicts)
    calls = [c for o in outcomes for c in o.tool_calls]
    demand = _demand(
        request,
        kind,
        checks,
        calls,
        _measured(criteria, verdicts),
        by_effect=by_effect,
        in_place=in_place,
        earlier=earlier,
        evaluation=evaluation,
        uncomputed=_uncomputed(criteria, verdicts),
        named_read=named_read,
        unit_count=unit_count,
    )
    asked = [o.asked for o in outcomes if o.asked]
    # a fresh conversation's reading agrees only when it stated the value again
    agreed = [o.asked for o in outcomes if o.asked and not _fell_back(o)]
    named = _named(request, kind, shape)
    if demand and evaluation and evaluated(output, calls, request):
        demand = False  # the request's own code computed the value it states
    if demand is None or (demand and not _backed(output, calls, request, agreed, named)):
        return "model"
    if demand and any(_contradicts(o, request, named) for o in outcomes):
        return "model"
    if demand and _asked_apart(asked):
        return "model"  # the round's subtasks were asked about different values
    return "human" if any(v.signal == "human" for v in verdicts) else "code"


def _fell_back(outcome: SubTaskOutcome) -> bool:
    """Whether a subtask asked to derive ``outcome.asked`` again ended on the answer asked
    about because the attempt after the ask failed or answered nothing
    (``agent_validator.corroboration_fallback``; pure): its verdicts are an earlier
    attempt's than its last. That attempt's fresh conversation did not state the value,
    so a listing it read is no second reading of it: "how many lines has the file that
    defines Circle?" answered 6 (the files a glob listed), asked again, answered 5 off the
    same glob, and once ended ``accept`` on 6 read off the glob in both conversations."""
    return bool(outcome.asked) and any(v.attempt != outcome.attempts for v in outcome.verdicts)


def _contradicts(outcome: SubTaskOutcome, request: str, named: bool) -> bool:
    """Whether a subtask asked to derive ``outcome.asked`` again ended on an answer that
    does not state it (pure): the derivations disagreed, so none of them is proof."""
    if not outcome.asked:
        return False
    stated = {_norm_value(v) for v in _values(outcome.output, request, named)}
    return _norm_value(outcome.asked) not in stated


def _asked_apart(asked: Sequence[str]) -> bool:
    """Whether the round's outcomes were asked to derive different values again
    (``SubTaskOutcome.asked``; pure): the derivations disagree across subtasks, as within
    one (:func:`_contradicts`, whose reading of a value — quotes and backticks aside —
    this shares) — a round of three subtasks, each answering the whole question, asked
    about 8, 8 and 0, once merged into "8. 8. 0." and ended ``accept`` on the 8 three row
    counts backed (the sum asked for was 327)."""
    return len({_norm_value(a) for a in asked}) > 1


def _checks(criteria: Mapping[str, Criterion], verdicts: Iterable[Verdict]) -> list[Check]:
    """The checks of the criteria the verdicts decided."""
    return [
        criterion.check
        for v in verdicts
        if (criterion := criteria.get(v.criterion_id)) is not None and criterion.check is not None
    ]


def _measured(criteria: Mapping[str, Criterion], verdicts: Iterable[Verdict]) -> dict[str, str]:
    """What the ``count_matches`` verdicts observed they counted over (``observed["seen"]``:
    "'src' holds 6 file(s): 49 lines"), by the check's path (pure; the first observation
    that reports several files, else the first)."""
    seen: dict[str, str] = {}
    for v in verdicts:
        criterion = criteria.get(v.criterion_id)
        check = criterion.check if criterion is not None else None
        if check is None or check.kind != "count_matches" or not v.observed.get("seen"):
            continue
        path = _norm(check.path)
        text = str(v.observed["seen"])
        if path not in seen or spans_files(check.path, text):
            seen[path] = text
    return seen


def _uncomputed(criteria: Mapping[str, Criterion], verdicts: Iterable[Verdict]) -> list[Check]:
    """The ``table_value`` checks whose verdicts computed no value (pure): their pass
    proves nothing (``checks.computed``)."""
    out = []
    for v in verdicts:
        criterion = criteria.get(v.criterion_id)
        check = criterion.check if criterion is not None else None
        if check is not None and check.kind in COMPUTED_KINDS and not computed(check, v.observed):
            out.append(check)
    return out


def _demand(
    request: str,
    kind: str,
    checks: Sequence[Check],
    calls: Sequence[ToolCall],
    counted: Mapping[str, str] | None = None,
    *,
    by_effect: bool = True,
    in_place: bool = True,
    earlier: Sequence[ToolCall] = (),
    evaluation: bool = False,
    uncomputed: Sequence[Check] = (),
    named_read: bool = False,
    unit_count: bool = False,
) -> bool | None:
    """What the request's duties demand of the proof of an answer whose ``checks`` passed,
    its verdicts' signals aside (pure): None when nothing proves it (only a model's
    word: a check copied from the request alone, a change not read back), True when its
    stated values must be backed (:func:`_backed`: a question with no check tied to its
    value), False when its checks are proof enough. ``counted``: what the counts
    observed they counted over, by path (:func:`_measured`). A change is read back by a
    check that read a file it changed, or — ``by_effect`` — by its effects
    (:func:`read_back_by_effect`, over ``earlier``, the task's earlier rounds' calls, and
    ``calls``; ``in_place``, a line changed in place by the words that changed).
    ``uncomputed``: the ``table_value`` checks that computed nothing — as if absent; one
    that computed the value ties a question's answer to it. ``named_read``
    (``Config.read_back_reads_named``; off for a log from before it): a change read back
    by effect is so only when every path the request names was read, listed or written by
    a call that worked — "make a copy of README.md named README.bak" once ended
    ``accept`` on a README.bak holding "Copy of README.md", every word the request's,
    README.md never read. ``unit_count`` (``Config.unit_count_phrase``): a unit named
    before "count" is what the request counts (:func:`_counts_asked`)."""
    checks = [c for c in checks if c not in uncomputed]
    measured = any(reads_workspace(c) for c in checks)
    if any(copied_from_request(c, request) for c in checks) and not measured:
        return None
    changed = changed_paths(calls)
    read_back = any(
        reads_workspace(c) and _touches(c.into or c.path, changed) and not _existence_only(c)
        for c in checks
    ) or (
        by_effect
        and read_back_by_effect(request, [*earlier, *calls], in_place=in_place)
        and not (named_read and _untouched(request, [*earlier, *calls], evaluation, written=False))
    )
    duty = duties(request, kind)
    tabled = any(c.kind in COMPUTED_KINDS for c in checks)  # code computed the value asked
    if duty.writes and not (duty.answers or duty.unsure) and not read_back:
        return None  # a change no check read back: its "done" is only the model's word
    # unsure: the readings disagree, or the model gave no valid kind
    if duty.unsure and not read_back:  # a change not read back, or a question: proven as one
        if changed:
            return None
        tables = [c.path for c in checks if c.kind in COMPUTED_KINDS]  # computed from it
        if _untouched(request, calls, evaluation, tables):
            return None  # it names a file no call read or wrote: one to write, unwritten
        if duty.shape is None:
            return not tabled  # a value code computed is the question's, whatever its shape
    if duty.answers and not (duty.unsure and read_back):  # a question (a change read back is not)
        tied = bool(_HOW_MANY.search(request)) and any(
            _counts_asked(c, request, counted or {}, unit_first=unit_count) for c in checks
        )
        return not (tied or tabled)
    return False


def _counts_asked(
    check: Check,
    request: str,
    counted: Mapping[str, str] | None = None,
    *,
    unit_first: bool = False,
) -> bool:
    """Whether ``check`` is a ``count_matches`` of what the request counts (pure): the
    lines holding a text the check names, or a plain unit (lines, words, files …) the
    words after "how many" name — "how many people in data/scores.csv scored above 80?"
    once ended ``accept`` on 7, the file's lines, which a plain ``lines`` count tied.

    A plain unit other than files counted over several files — a directory or a glob, as
    the check's observation (``counted``, by path: :func:`_measured`) reports, or, not
    yet measured, a glob — ties nothing: it sums the files, and a how-many question about
    one of them is not what it measured ("find the file under src that defines the class
    Circle and tell me how many lines it has" once ended ``accept`` on 49, the lines of
    the six files under src; the file has 22). A count of the files themselves still
    ties. ``unit_first`` (``Config.unit_count_phrase``): a unit named before "count"
    counts too — "what is the line count of src/app.py?" is tied by a ``lines`` count of
    it; without, a real 1.5B model's right 3, proven by the check, was asked to be derived
    again, and the second conversation looped on ``read_file``."""
    if check.kind != "count_matches":
        return False
    parsed = parse_unit(check.value)
    if parsed is None:
        return False
    unit, text = parsed
    seen = (counted or {}).get(_norm(check.path), "")
    if text is None and unit != "files" and spans_files(check.path, seen):
        return False
    return text is not None or _counts_unit(unit, request, unit_first=unit_first)


def _without_content(call: ToolCall) -> ToolCall:
    """``call`` without the text a ``write_file`` writes: a path named in what is written
    was not read ("copy of README.md" written to README.bak does not read README.md)."""
    if call.tool != "write_file" or "content" not in call.args:
        return call
    args = {k: v for k, v in call.args.items() if k != "content"}
    return msgspec.structs.replace(call, args=args)


def _untouched(
    request: str,
    calls: Sequence[ToolCall],
    evaluation: bool = False,
    read: Sequence[str] = (),
    *,
    written: bool = True,
) -> bool:
    """Whether the request names a workspace path that no tool call that worked read,
    listed or wrote (pure). A request read both ways ("count the TODO lines in
    notes/todo.txt and write the count to todo_count.txt") that was answered as a
    question never touched the file it named to write: the question's value, even tied
    to a count check, is not what it asked for. With ``evaluation``
    (``Config.proof_by_evaluation``), a call that evaluates the request
    (:func:`._evaluation.evaluates`: ``cd src && python3 -c 'from config import …'``)
    read the Python files the request names: "what does default_port() in src/config.py
    return?", read as a change, once ended ``success`` on its evaluation, src/config.py
    "unread". ``read``: the paths a check computed the answer from (a ``table_value``
    that computed it read its table: "what is the total of the amount column in
    data/sales.csv?", read with no kind, once ended ``success`` on the computed 4250
    because its last round's one command had failed). ``written`` off: a path named only
    in the text a ``write_file`` writes is not touched (:func:`_without_content`)."""
    worked = [
        c if written else _without_content(c)
        for c in calls
        if c.ok and c.refusal is None and c.exit_code in (None, 0)
    ]
    ran = evaluation and any(evaluates(c, request) for c in worked)
    done = {_norm(p) for p in read}
    return any(
        not (ran and p.endswith(".py"))
        and _norm(p) not in done
        and not any(_reads_named(c, [p]) for c in worked)
        for p in request_paths(request)
    )


class Corroboration(msgspec.Struct, frozen=True, kw_only=True):
    """A derivation to ask for (:func:`needs_second_derivation`): the value an answer
    states and the one tool call that backs it — a second derivation, by another call —
    or, with no ``call``, a value no tool call backs (the model computed it in its head:
    a mean of a column it read), to be computed by a tool that prints it."""

    value: str
    call: ToolCall | None = None
    """The one call that backs ``value``; None: none does (:attr:`unbacked`)."""
    command: str = ""
    """For a value no call backs, the command that evaluates the request, when code can
    write it (:func:`._evaluation.evaluation_command`): what the Executor is told to run."""
    pattern: str = ""
    """Else, that command with ``…`` where the call goes, when the request asks what code
    in one named Python file returns (:func:`._evaluation.evaluation_pattern`)."""

    @property
    def unbacked(self) -> bool:
        """Whether no tool call backs the value: the ask is to show it with a tool."""
        return self.call is None

    def feedback(self) -> str:
        """What the Executor is told (pure)."""
        if self.call is None and self.command:
            return (
                f"Your answer states {self.value}, which no tool result shows. The code "
                f"the request asks about is computed by: {self.command} — answer again "
                "starting with what it printed."
            )
        if self.call is None and self.pattern:
            return (
                f"Your answer states {self.value}, which no tool result shows. Run the "
                f"code the request asks about with python3, as in: {self.pattern} — with "
                "the call it asks about in place of … — then answer again starting with "
                "what it printed."
            )
        if self.call is None:
            return (
                f"Your answer states {self.value}, which no tool result shows. Compute it "
                "with a command or tool whose output prints it, run over what the request "
                "names (not one that prints a value you give it), then answer again "
                "starting with the value."
            )
        return (
            f"Your answer states {self.value}, which one tool call backs "
            f"({_call_text(self.call)}). Derive it once more with a different command or tool "
            "(not that call), then answer again starting with the value."
        )


def _call_text(call: ToolCall, limit: int = 120) -> str:
    """A tool call as a person or a model reads it (pure): a shell call's command, any
    other ``tool(arguments)``."""
    command = call.args.get("command") if call.tool == "shell" else None
    if isinstance(command, str):
        text = f"`{command}`"
    else:
        shown = ", ".join(f"{k}={json.dumps(v)}" for k, v in sorted(call.args.items()))
        text = f"{call.tool}({shown})"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def needs_second_derivation(
    *,
    request: str,
    kind: str,
    criteria: Mapping[str, Criterion],
    verdicts: Sequence[Verdict],
    calls: Sequence[ToolCall],
    output: str,
    pending: Iterable[Criterion] = (),
    shape: str = "",
    unbacked: bool = True,
    by_effect: bool = True,
    in_place: bool = True,
    evaluation: bool = True,
    named_read: bool = False,
    unit_count: bool = False,
) -> Corroboration | None:
    """The value a tool call should derive before an attempt's answer is given on — a
    second, different call, or (no ``call``) a first one that shows it — or None (pure;
    the rule is the module's). ``verdicts`` are the attempt's (decided on ``criteria``),
    ``calls`` every call of its subtask so far, ``output`` its answer; ``shape`` the
    model's reading of what it must state (as :func:`established`); ``pending`` the
    criteria judged later (the task's): each counted as passing — were one to fail, no
    derivation would make the task accepted — and one with no check (a model will judge
    it) asks nothing; ``unbacked`` off (``Config.corroborate_unbacked``, a log from
    before it) asks nothing about a value no call backs, as before; ``by_effect``
    (``Config.read_back_by_effect``), ``in_place`` (``Config.read_back_in_place``) and
    ``unit_count`` (``Config.unit_count_phrase``) as :func:`established`'s.

    It asks only where :func:`established` would end ``model`` for want of a derivation
    alone: every verdict passed and none is a model's; no check is copied from the
    request unless one reads the workspace; the request's duties demand backed values (a
    question, or an unsure request that changed nothing, with no ``count_matches`` tied
    to a how-many request and no check reading back a change); the answer states values
    (the request's own aside). Of those, the first that no tool call that worked backs is
    asked about with no call, when the request asks a question by either reading
    (:attr:`.request.Duties.answers`; grounding passed the value — a mean of a column read
    off a file, rounded — yet no result shows it: "what is the mean …?" answered right,
    off a ``read_file``, once ended ``success`` with nothing asked). Else, each backed by a
    call and none by two different calls (for a name question: no name by two), the
    value is the first stated (numbers first, then code-like values; for a name question
    code-like values, its names, then numbers); the call, the first that backs it. A name
    question whose answer states no name (only figures) asks nothing: no derivation of a
    figure proves the name asked for (:func:`_primary`). The ask never proves anything:
    :func:`established` decides the answer that comes back."""
    if not kind or not verdicts or not all(v.passed for v in verdicts):
        return None
    if any(v.signal == "llm" for v in verdicts):
        return None  # a model's verdict: no derivation makes it proof
    later = list(pending)
    if any(c.check is None for c in later):
        return None  # a model will judge it
    checks = [*_checks(criteria, verdicts), *(c.check for c in later if c.check is not None)]
    counted = _measured(criteria, verdicts)
    demand = _demand(
        request,
        kind,
        checks,
        calls,
        counted,
        by_effect=by_effect,
        in_place=in_place,
        evaluation=evaluation,
        uncomputed=_uncomputed(criteria, verdicts),  # a pending one is the same check
        named_read=named_read,
        unit_count=unit_count,
    )
    if demand is not True:
        return None
    if evaluation and evaluated(output, calls, request):
        return None  # the request's own code computed it: nothing to derive again
    named = _named(request, kind, shape)
    values = _values(output, request, named)
    if not any(_primary(v, values, named) for v in values):
        return None  # no value (or a name question answered with no name): none to derive
    backers = [_backers(v, calls, request) for v in values]
    shown = next((v for v, b in zip(values, backers, strict=True) if not b), None)
    if shown is not None:  # a value no call backs: asked to be shown by one, or nothing
        # only an answer to a question (by either reading): an unsure request that asks
        # for no value ("sixteen parts") states none a tool should compute
        asks = duties(request, kind, shape).answers
        if not (unbacked and asks):
            return None
        command = evaluation_command(request) if evaluation else None
        pattern = evaluation_pattern(request) if evaluation and not command else None
        return Corroboration(value=shown, command=command or "", pattern=pattern or "")
    if max(len(b) for v, b in zip(values, backers, strict=True) if _primary(v, values, named)) >= 2:
        return None
    return Corroboration(value=values[0], call=backers[0][0])


def changed_paths(calls: Iterable[ToolCall]) -> frozenset[str]:
    """The workspace paths the calls changed (pure): the effects of every call that
    worked and was not refused — what Law 1 observed was applied."""
    return frozenset(_norm(e.path) for c in calls if c.ok and c.refusal is None for e in c.effects)


_READ_ONLY_TOOLS = frozenset({"read_file", "glob", "load_data"})
"""The built-in tools that change nothing (``tools.catalog.BUILTIN_TOOLS`` but
``write_file`` and ``shell``)."""
_QUOTED = re.compile(
    r"(?<!\w)'(.+?)'(?!\w)|(?<!\w)\"(.+?)\"(?!\w)|`([^`\n]+)`|\u2018(.+?)\u2019|\u201c(.+?)\u201d"
)
"""A text a request quotes: in straight quotes (an apostrophe inside a word is none:
"Bob's"), backticks, or typographic quotes, on one line."""


def _quoted(request: str) -> list[str]:
    """The texts ``request`` quotes ('…', "…", `…`, ‘…’, “…”), in order (pure)."""
    found = (next(g for g in m.groups() if g is not None) for m in _QUOTED.finditer(request))
    return [q for q in found if q.strip()]


def _effect_lines(
    request: str, calls: Sequence[ToolCall], *, in_place: bool = True
) -> dict[str, tuple[int, int]] | None:
    """The lines added and removed in each file the calls that worked changed, by path in
    the order first changed, when they read back as the request (:func:`read_back_by_effect`);
    None when they do not (pure)."""
    if _DERIVED_WRITE.search(request):
        return None  # what it writes is a value it asks to find: its own words prove nothing
    named = {_norm(p) for p in request_paths(request)}
    files: dict[str, tuple[int, int]] = {}
    added_texts: list[str] = []
    dirs: list[str] = []
    worded = False  # a line that worked holds a word: not only blank lines or punctuation
    for call in calls:
        if call.refusal is not None:
            continue  # not run: nothing of it was applied
        if _unobserved(call):
            return None  # what it changed, if anything, no one observed
        for effect in call.effects:  # a failed call's too: a command's are applied anyway
            path = _norm(effect.path)
            if effect.kind == "dir" and effect.change == "created":
                dirs.append(path)
                continue
            if effect.kind != "file" or effect.change not in ("created", "modified"):
                return None  # a deletion, a link, a mode, a file replaced …
            lines = None if effect.diff is None else diff_sides(effect.diff)
            if lines is None or path not in named:
                return None  # not known line by line, or a file the request does not name
            removed, added = lines
            if not lines_read_back(request, removed, added, in_place=in_place):
                return None  # a word the request does not hold: collateral, or derived
            if call.ok:
                plus, minus = files.get(path, (0, 0))
                files[path] = (plus + len(added), minus + len(removed))
                added_texts.append("\n".join(added))
                worded = worded or any(change_words(line) for line in (*removed, *added))
    if not worded:
        return None  # no file changed, or no line of one that holds a word
    if any(not any(f.startswith(f"{d}/") for f in files) for d in dirs):
        return None  # a directory no changed file is in
    for text in _quoted(request):
        if _norm(text) not in named and not any(text in added for added in added_texts):
            return None  # a text the request quotes that no added line holds
    return files


def _unobserved(call: ToolCall) -> bool:
    """Whether ``call`` may have changed the workspace unseen (pure): a ``shell`` command
    that ran outside the sandbox (it has output streams or an exit code: one that failed
    before running has neither), or a host's function that worked. A call of any other
    name that failed is taken to have changed nothing — most often a tool the model made
    up, which never ran; a host's function that changed files and then raised is the
    case this misses."""
    if call.tool == "shell":
        ran = call.stdout is not None or call.exit_code is not None
        return ran and not call.sandboxed
    if call.tool in _READ_ONLY_TOOLS or call.tool == "write_file":
        return False
    return call.ok


def unchanged(request: str, kind: str, instruction: str, calls: Sequence[ToolCall]) -> str | None:
    """Why the calls of a subtask that is the request itself (``instruction`` the
    ``request``) have not done the change it asks for, in one line, or None (pure): the
    request is surely a change or a creation (:func:`.request.duties`: writes, not unsure)
    and no call that was not refused changed the workspace (``ToolCall.effects``), wrote
    a file that already held the text (``write_file`` that worked), or may have changed it
    unseen (:func:`_unobserved`). A change refused (``lost_lines``, a Law 1 denial) or
    never tried has not been made, whatever the answer says ("The result does not
    directly answer the subtask. Next tool call:" passed as done)."""
    if not request.strip() or instruction.strip() != request.strip():
        return None  # a step of a plan: reading steps change nothing
    reading = duties(request, kind)
    if not reading.writes or reading.unsure:
        return None
    for call in calls:
        if call.refusal is not None:
            continue
        if call.effects or (call.tool == "write_file" and call.ok) or _unobserved(call):
            return None
    refused = sorted({c.refusal for c in calls if c.refusal is not None})
    why = f" (refused: {', '.join(refused)})" if refused else ""
    return (
        f"the request asks for a change and no call of this subtask changed the workspace"
        f"{why}: make the change with a tool"
    )


def read_back_by_effect(request: str, calls: Sequence[ToolCall], *, in_place: bool = True) -> bool:
    """Whether what Law 1 observed the ``calls`` change reads back as the change the
    ``request`` asks for (pure): True when all of these hold —

    - the calls that worked and were not refused (:func:`changed_paths`) changed a file;
    - every effect of a call not refused — one that failed too: a command's effects are
      applied whatever its exit code — is a file ``created`` or ``modified`` whose
      ``FileEffect.diff`` is known (not None: a binary file, an oversized one, a log from
      before the field), or a directory ``created`` that a changed file is in (``mkdir -p
      out`` for ``out/names.txt``); a deletion, a link, a mode change, a replaced path or
      anything else is not read back;
    - every such file is one the request names (:func:`.request.request_paths`);
    - every word of every line added or removed is a word of the request
      (:func:`.request.change_words`: stop words aside; a single letter or digit counts):
      no collateral change, no value the request does not state — a count the model
      computed and wrote ("write the number of ERROR lines into report.txt") is not read
      back by this rule; and the other words of a changed line place it, so changing the
      east row's 800 to 850 where the request names the west row is not it — save, with
      ``in_place`` (``Config.read_back_in_place``), a line changed in place
      (:func:`._lines.lines_read_back`: a removed line and the added line at least 60%
      alike that keeps it) whose words were replaced, gone and come: it is read back by
      the words that changed, when each is a word of the request, a word gone that is no
      number (or every word of both lines the request's) locates it, and each word gone
      comes before each word come in the request — ``def shout(text: str) -> str:`` →
      ``def yell(text: str) -> str:`` is "rename the function shout to yell in
      src/textutil.py", ``east,800`` → ``east,850`` is still not the west row's, and
      blue → red is not "change red to blue";
    - every text the request quotes ('…', "…", `…`) is in the added lines of one effect,
      verbatim (a quoted path aside): "append 'TODO: call Bob'" is not proven by a file
      gaining "bob";
    - at least one line that holds a word was added or removed (a blank line appended to
      notes/todo.txt is no todo added);
    - the request does not ask to write a value it does not state (``_DERIVED_WRITE``:
      "write its name / it / the count … to FILE"): "find the region with the largest
      amount in data/sales.csv and write its name to top.txt" once ended ``accept`` on
      top.txt holding "Region with the largest amount", every word of it the request's.

    A file several calls changed is held to every call's diff: a wrong write later put
    right is not read back (fail closed). Every call not refused must be one whose
    changes are observed (:func:`_unobserved`): a built-in tool, ``shell`` only when
    sandboxed — a command run outside the sandbox or a host's function that worked may
    have changed anything."""
    return _effect_lines(request, calls, in_place=in_place) is not None


def read_back_note(
    *,
    request: str,
    kind: str,
    criteria: Mapping[str, Criterion],
    task_verdicts: Sequence[Verdict],
    outcomes: Iterable[SubTaskOutcome],
    output: str,
    shape: str = "",
    in_place: bool = True,
    earlier: Sequence[ToolCall] = (),
) -> str:
    """How a change :func:`established` proves by code only because it was read back by
    effect says so to a person (pure; ``FinalResult.established_by``): "read back by
    effect: notes/todo.txt +1 line, every changed word in the request"; "" when the
    answer is established otherwise (the arguments are :func:`established`'s, with
    ``by_effect`` on; :func:`established_and_note` gives both at once)."""
    return established_and_note(
        request=request,
        kind=kind,
        criteria=criteria,
        task_verdicts=task_verdicts,
        outcomes=outcomes,
        output=output,
        shape=shape,
        by_effect=True,
        in_place=in_place,
        earlier=earlier,
    )[1]


def established_and_note(
    *,
    request: str,
    kind: str,
    criteria: Mapping[str, Criterion],
    task_verdicts: Sequence[Verdict],
    outcomes: Iterable[SubTaskOutcome],
    output: str,
    shape: str = "",
    by_effect: bool = True,
    in_place: bool = True,
    earlier: Sequence[ToolCall] = (),
    evaluation: bool = True,
    named_read: bool = False,
    unit_count: bool = False,
) -> tuple[Established | None, str]:
    """:func:`established` and, when ``by_effect`` made it ``code`` or ``human``, its
    :func:`read_back_note` (else ""), or when ``evaluation`` did, which call evaluated
    the request ("evaluated: `python3 src/app.py` printed hello artoo") — the round
    judged once with both, and once more without one only when it proved something
    (pure)."""
    outcomes = list(outcomes)

    def proof(effect: bool, evaluate: bool = evaluation) -> Established | None:
        return established(
            request=request,
            kind=kind,
            criteria=criteria,
            task_verdicts=task_verdicts,
            outcomes=outcomes,
            output=output,
            shape=shape,
            by_effect=effect,
            in_place=in_place,
            earlier=earlier,
            evaluation=evaluate,
            named_read=named_read,
            unit_count=unit_count,
        )

    found = proof(by_effect)
    if found not in ("code", "human"):
        return found, ""
    if evaluation and proof(by_effect, False) != found:
        ran = next(c for o in outcomes for c in o.tool_calls if evaluates(c, request) and c.stdout)
        printed = " ".join(line.strip() for line in (ran.stdout or "").splitlines()[:3])
        return found, f"evaluated: {_call_text(ran)} printed {printed}"
    if not by_effect or proof(False) == found:
        return found, ""
    calls = [*earlier, *(c for o in outcomes for c in o.tool_calls)]
    files = _effect_lines(request, calls, in_place=in_place)
    shown = []
    for path, (plus, minus) in (files or {}).items():
        if plus or minus:
            counts = " ".join(
                n for n in (f"+{plus}" if plus else "", f"-{minus}" if minus else "") if n
            )
            shown.append(f"{path} {counts} line{'' if plus + minus == 1 else 's'}")
    note = f"read back by effect: {' and '.join(shown)}, every changed word in the request"
    return found, note


def _existence_only(check: Check) -> bool:
    """True for a check that a file is there and nothing of what it holds: no proof of a
    write (a copy of the wrong text exists too). A deletion's ``file_exists`` = false is
    the whole of what a removal must show."""
    return check.kind == "file_exists" and check.value is not False


def _norm(path: str) -> str:
    return path.strip().removeprefix("./").strip("/")


def _touches(path: str, changed: frozenset[str]) -> bool:
    """True when a check's ``path`` (a file or a glob) names a path the task changed."""
    pattern = _norm(path)
    if not pattern:
        return False
    return any(p == pattern or fnmatch.fnmatchcase(p, pattern) for p in changed)


def _backed(
    output: str,
    calls: Sequence[ToolCall],
    request: str,
    asked: Sequence[str] = (),
    named: bool = False,
) -> bool:
    """True when the answer states values the request does not hold and each is backed
    by a tool call that worked, one of them by two different calls (pure)."""
    values = _values(output, request, named)
    backing = [derivations(v, calls, request, asked) for v in values]
    if not values or min(backing) < 1:
        return False
    primary = [n for v, n in zip(values, backing, strict=True) if _primary(v, values, named)]
    return max(primary, default=0) >= 2  # none: a name question answered with no name


def _primary(value: str, values: Sequence[str], named: bool) -> bool:
    """Whether ``value`` may be the one two derivations back (pure): any value, but for a
    name question only a name — "**drill**, priced at 89" read twice for its 89 and once
    for its name proves the price, not the name asked for — and, where the answer states
    no name (``values`` all figures), none: "the most expensive item is the hammer, with a
    price of 15" (a lowercase name, no value the proof sees) once ended ``accept`` on its
    15, read off the same listing in two conversations. Never a zero: 0 is what a
    command prints over nothing (an absent column, no match), so two wrong commands
    agree on it — two awks summing text columns once "proved" a sum of 0."""
    if _zero(value):
        return False
    return not named or not _FIGURE.fullmatch(value.strip())


def _zero(value: str) -> bool:
    """Whether ``value`` states the number zero and nothing else (pure): ``0``, ``0.0``,
    ``0.00``; not ``10``, ``v0`` or ``0x1f``."""
    numbers = stated_numbers(value)
    if len(numbers) != 1 or _norm_value(value) != numbers[0]:
        return False
    try:
        return Decimal(numbers[0].replace(",", "")) == 0
    except ArithmeticError:
        return False


def _named(request: str, kind: str, shape: str) -> bool:
    """Whether the request asks for a name (pure): its duties' shape, code's reading of
    the request first, the model's (``shape``) where code sees none."""
    return duties(request, kind, shape).shape == "name"


def _values(output: str, request: str, named: bool = False) -> list[str]:
    """The values an answer states that the request does not hold (pure): numbers, then
    code-like values; when the request asks for a name (``named``), code-like values,
    then the names it states (:func:`.request.named_values`, each not already stated),
    then numbers — the name is what a second derivation is asked about. An answer that
    states none of those, to a request code does not read as asking for a name, is held
    to the names it states: "what is the parent class of Square in src/shapes.py?"
    answered "… is Shape." (one grep) stated no value the proof saw, nothing was asked,
    and it ended ``success`` however right."""
    values = [*stated_numbers(output, request), *code_values(output, request)]
    if named:  # the names first: they are what is asked, and what a second derivation reads
        stated = {_norm_value(v) for v in values}
        names = [n for n in named_values(output, request) if _norm_value(n) not in stated]
        values = [*code_values(output, request), *names, *stated_numbers(output, request)]
    asked = set(_WORD.findall(request))
    found = [v for v in values if not set(_WORD.findall(v)) <= asked]
    if found or named:
        return found
    return [v for v in named_values(output, request) if not set(_WORD.findall(v)) <= asked]
