"""The value a question asks of a CSV file, computed by code (pure; ``table_value`` checks).

"What is the total of the amount column in data/sales.csv?" asks for a value the file
holds: code can compute it, and a small model's arithmetic or awk (a column that does not
exist summed to 0) then never has to be taken on its word. :func:`resolve` reads the
request against the file's header and rows and computes the value, or says why it
cannot — and when it cannot, the check proves nothing either way (fail closed: the
answer is held to its derivations as before).

The reading, all of it by code from the request's words and the file's header:

- **columns** — a header name the request says as a word ("the amount column", "the
  highest price"), its plural ("prices"), or a word it begins ("scored" for ``score``,
  a name of four letters or more, at most two letters more);
- **a condition** — a comparison with a number, on the one numeric column named
  ("scored above 80": ``score > 80``; above, over, more/greater/higher than, exceeding,
  below, under, less/fewer/lower than, at least, at most), or a cell value of a named
  text column the request says ("have the category tool": ``category = tool``);
- **what is asked** — how many rows ("how many …", "number of …", "count …"; with a
  condition only: a plain row count is ``count_matches``'s), which value of a named text
  column has the largest or smallest value of a numeric one ("which region has the
  smallest amount"; with "total", of the column's values summed per distinct value when
  they repeat), or one aggregate of the one numeric column named: total/sum, mean/average,
  highest/largest/maximum, lowest/smallest/minimum.

Anything else — no column named, two numeric columns and no way to tell which, two
aggregates, a word such as "expensive" that names no column — resolves to nothing.
"""

from __future__ import annotations

import csv
import io
import json
import re
import shlex
from collections.abc import Sequence
from decimal import Decimal, InvalidOperation

import msgspec

from artoo.schemas import Check

from .request import content_words, duties, request_paths

__all__ = [
    "TABLE_SUFFIXES",
    "Resolved",
    "code_table_check",
    "parse_table",
    "resolve",
    "stated_values",
    "table_path",
    "written_to",
]

TABLE_SUFFIXES = (".csv", ".tsv")
"""The files a ``table_value`` check reads."""

_AGGREGATES: dict[str, frozenset[str]] = {
    "sum": frozenset("total sum combined altogether".split()),
    "mean": frozenset("mean average avg".split()),
    "max": frozenset(
        "highest largest biggest greatest maximum max most top higher larger bigger greater".split()
    ),
    "min": frozenset("lowest smallest least minimum min fewest lower smaller fewer".split()),
}
_COMPARISONS: tuple[tuple[str, str], ...] = (
    (r"at\s+least", ">="),
    (r"at\s+most", "<="),
    (r"no\s+(?:more|greater|higher)\s+than", "<="),
    (r"no\s+(?:less|fewer|lower)\s+than", ">="),
    (r"above|over|exceeding|(?:more|greater|higher|larger|bigger)\s+than", ">"),
    (r"below|under|(?:less|fewer|lower|smaller)\s+than", "<"),
)
_NUMBER = r"(-?\d+(?:\.\d+)?)"
_COUNT = re.compile(r"\bhow\s+many\b|\bnumber\s+of\b|\bcount\b", re.IGNORECASE)
_LABEL = re.compile(
    r"\b(?:which|what)\s+([a-z0-9_]+)"
    r"|\bthe\s+([a-z0-9_]+)\s+(?:with|having|whose|that\s+has|that\s+have)\s+the\b"
)
_FILLER = frozenset(
    """column columns row rows entry entries record records line lines people person persons
    value values file table csv number count have has had contain contains containing
    hold holds listed recorded appear appears amount
    write writes save put store its alone only result answer name then""".split()
)
"""The words a table question may say besides its columns, cell values, aggregates and
comparisons (and the stop words of ``request.content_words``): any other word may be a
condition code cannot read ("the total qty of *food* items"), so code computes nothing."""
_WORD = re.compile(r"[a-z0-9_][a-z0-9_'-]*")
_MAX_ROWS = 100_000
_MAX_OTHERS = 50


class Resolved(msgspec.Struct, frozen=True, kw_only=True):
    """What code computed: the values an answer may state (``values``: numbers as
    decimal text, or names), whether they are ``numbers``, the other values of the
    column a name was picked from (``others``: an answer that also states one of them
    does not say which), and ``seen``: one line saying what was computed."""

    values: list[str]
    numbers: bool
    others: list[str] = []
    approximate: bool = False
    seen: str = ""
    command: str = ""
    """A ``python3 -c`` command that prints the value from the file (empty when no
    path was given): what the Executor runs for a model that stated another."""


def table_path(paths: Sequence[str]) -> str | None:
    """The one table file among a request's paths, or None (pure)."""
    tables = [p for p in paths if p.lower().endswith(TABLE_SUFFIXES)]
    return tables[0] if len(tables) == 1 else None


def code_table_check(request: str, kind: str = "") -> Check | None:
    """The ``table_value`` check code writes for a question about one table file, or
    None (pure: it reads the request, not the workspace — whether code can compute the
    value is found when the check reads the file): a request that must answer
    (``request.duties`` under the Perceiver's ``kind``; one read as a change too stays
    held to changing nothing by the proof) naming exactly one ``.csv``/``.tsv`` path and
    no other path; or a request that writes (a change or creation) naming one table and
    one other file it writes the value to (:func:`written_to`: "find the region with the
    largest amount in data/sales.csv and write its name to top.txt" → ``into`` top.txt,
    whose content the check judges)."""
    duty = duties(request, kind)
    paths = request_paths(request)
    path = table_path(paths)
    if path is None:
        return None
    if duty.writes and len(paths) == 2 and (into := written_to(request, paths)):
        return Check(kind="table_value", path=path, value=request.strip(), into=into)
    if not duty.answers or len(paths) != 1:
        return None
    return Check(kind="table_value", path=path, value=request.strip())


_WRITE_VERB = re.compile(r"\b(?:write|save|put|store|record)s?\b", re.IGNORECASE)


def written_to(request: str, paths: Sequence[str]) -> str | None:
    """The file a request writes its value to, or None (pure): the one of ``paths`` said
    after a write verb (write, save, put, store, record) as "to/into/as [a/the/new file]
    PATH" — "… and write its name to top.txt"; the other paths are what it reads."""
    verb = _WRITE_VERB.search(request)
    if verb is None:
        return None
    after = request[verb.end() :]
    targets = [
        p
        for p in paths
        if re.search(
            rf"\b(?:to|into|as)\s+(?:(?:a|an|the|new|file)\s+)*[`'\"]?(?:\./)?{re.escape(p)}"
            r"(?![\w/.-]*\w)",
            after,
            re.IGNORECASE,
        )
    ]
    return targets[0] if len(targets) == 1 else None


def parse_table(text: str, path: str) -> tuple[list[str], list[list[str]]]:
    """The header and rows of a CSV (a TSV for ``.tsv``) text (pure). Raises ValueError
    for a file with no header."""
    delimiter = "\t" if path.lower().endswith(".tsv") else ","
    reader = csv.reader(io.StringIO(text), delimiter=delimiter)
    rows = [row for _, row in zip(range(_MAX_ROWS + 1), reader, strict=False) if any(row)]
    if not rows:
        raise ValueError(f"{path} has no header row")
    header = [h.strip() for h in rows[0]]
    return header, [[c.strip() for c in row] for row in rows[1:]]


def _number(cell: str) -> Decimal | None:
    text = cell.strip().replace(",", "")
    if not text:
        return None
    try:
        value = Decimal(text)
    except InvalidOperation:
        return None
    return value if value.is_finite() else None


def _show(value: Decimal) -> str:
    if value == value.to_integral_value():
        return str(value.quantize(Decimal(1)))
    return format(round(value, 10).normalize(), "f")


def _says(column: str, words: set[str], text: str) -> bool:
    name = column.lower()
    if not name:
        return False
    if " " in name or "_" in name:
        spaced = name.replace("_", " ")
        return spaced in text or name in text
    if name in words or f"{name}s" in words or f"{name}es" in words:
        return True
    return len(name) >= 4 and any(w.startswith(name) and len(w) - len(name) <= 2 for w in words)


def _aggregates(words: set[str]) -> set[str]:
    return {op for op, names in _AGGREGATES.items() if words & names}


def resolve(
    request: str,
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    path: str = "",
    into: str = "",
) -> Resolved | str:
    """The value ``request`` asks of the table ``header``/``rows`` (read from ``path``:
    the command that prints it names it — and, for a value the request writes to a file,
    ``into``, writes it there), or why code cannot compute it (pure; the reading is the
    module's)."""
    got = _resolve(request, header, rows)
    if isinstance(got, str) or not path:
        return got[0] if isinstance(got, tuple) else got
    resolved, (filters, body) = got
    delimiter = ', delimiter="\\t"' if path.lower().endswith(".tsv") else ""
    written = f'; open({json.dumps(into)}, "w").write(out + "\\n")' if into else ""
    code = (
        f"import csv, collections; rows = [r for r in list(csv.reader(open({json.dumps(path)}"
        f"){delimiter}))[1:] if {' and '.join(['r', *filters])}]; {body}; print(out){written}"
    )
    return msgspec.structs.replace(resolved, command=f"python3 -c {_shell_word(code)}")


_FIGURE = "(lambda x: str(int(x)) if x == int(x) else str(x))"
"""A number as the command prints it: 4250, not 4250.0."""


def _shell_word(code: str) -> str:
    return f"'{code}'" if "'" not in code else shlex.quote(code)


_Program = tuple[list[str], str]  # the rows' filters, and the statement that prints the value


def _resolve(
    request: str, header: Sequence[str], rows: Sequence[Sequence[str]]
) -> tuple[Resolved, _Program] | str:
    text = request.lower()
    for path in sorted(request_paths(text), key=len, reverse=True):
        text = text.replace(path, " ")
    text = " ".join(text.split())
    compared: list[tuple[str, Decimal]] = []
    for pattern, op in _COMPARISONS:
        phrase = re.compile(rf"\b(?:{pattern})\s+{_NUMBER}(?![\w.])")
        compared += [(op, Decimal(m.group(1))) for m in phrase.finditer(text)]
        text = phrase.sub(" ", text)
    words = set(_WORD.findall(text))
    width = len(header)
    table = [list(row)[:width] + [""] * (width - len(row)) for row in rows]
    if not table:
        return f"{', '.join(header)}: no rows"
    numeric = {
        i
        for i in range(width)
        if any(r[i] for r in table) and all(_number(r[i]) is not None for r in table if r[i])
    }
    named = [i for i, h in enumerate(header) if _says(h, words, text)]
    unread = _unread(text, words, header, table, named)
    if unread:
        return f"the request says {unread!r}, which names no column, value or aggregate"
    # a condition on a text column: one cell value of a named text column the request says
    where: list[tuple[int, str]] = []
    for i in named:
        if i in numeric:
            continue
        said = {
            r[i].lower()
            for r in table
            if r[i] and (r[i].lower() in words or f"{r[i].lower()}s" in words)
        }
        said.discard(header[i].lower())
        if len(said) > 1:
            return f"the request says several values of column {header[i]!r}"
        if said:
            where.append((i, said.pop()))
    numbers = [i for i in named if i in numeric]
    kept = [r for r in table if all(r[i].lower() == v for i, v in where)]
    conditions = [f"{header[i]} = {v}" for i, v in where]
    filters = [f"r[{i}].strip().lower() == {json.dumps(v)}" for i, v in where]
    if compared:
        if len(compared) > 1 or len(numbers) != 1:
            return "a comparison, and not exactly one numeric column named for it"
        (op, bound), column = compared[0], numbers[0]
        kept = [r for r in kept if (n := _number(r[column])) is not None and _holds(n, op, bound)]
        conditions.append(f"{header[column]} {op} {_show(bound)}")
        filters += [f"r[{column}].strip()", f"float(r[{column}]) {op} {_show(bound)}"]
        numbers = []  # the compared column is the condition's, not the value's
    condition = " and ".join(conditions)
    aggregates = _aggregates(words)
    label = _label(text, header, named, numeric, where)
    if "who" in words and label is None:
        return "'who' asks for a name, and no column names what"
    if _COUNT.search(request):
        if not conditions or numbers or aggregates - {"sum"}:
            return "a count with no condition code can read (a plain row count is count_matches's)"
        counted = Resolved(
            values=[str(len(kept))],
            numbers=True,
            seen=f"code counted the rows with {condition}: {len(kept)}",
        )
        return counted, (filters, "out = str(len(rows))")
    if not kept:
        return f"no row has {condition}"
    if label is not None:
        if len(numbers) != 1:
            return "which: not exactly one numeric column named"
        which = _which(header, kept, label, numbers[0], aggregates)
        if isinstance(which, str):
            return which
        found, grouped, pick = which
        num, k = numbers[0], label
        body = (
            f"t = collections.Counter(); [t.update({{r[{k}].strip(): float(r[{num}])}}) "
            f"for r in rows]; best = {pick}(t.values()); "
            'out = " ".join(sorted(x for x in t if t[x] == best))'
            if grouped
            else f"best = {pick}(float(r[{num}]) for r in rows); "
            f'out = " ".join(sorted({{r[{k}].strip() for r in rows if float(r[{num}]) == best}}))'
        )
        return found, ([*filters, f"r[{num}].strip()"], body)
    if len(numbers) != 1:
        return "not exactly one numeric column named"
    if len(aggregates) != 1:
        return "not exactly one aggregate (total, mean, highest, lowest) asked"
    column = numbers[0]
    values = [x for r in kept if (x := _number(r[column])) is not None]
    op = aggregates.pop()
    value = {
        "sum": lambda: sum(values, Decimal(0)),
        "mean": lambda: sum(values, Decimal(0)) / len(values),
        "max": lambda: max(values),
        "min": lambda: min(values),
    }[op]()
    over = f" of the rows with {condition}" if condition else ""
    said_as = {"sum": "total", "mean": "mean", "max": "highest", "min": "lowest"}[op]
    resolved = Resolved(
        values=[_show(value)],
        numbers=True,
        approximate=op == "mean",
        seen=f"code computed the {said_as} of {header[column]}{over} over "
        f"{len(values)} row(s): {_show(value)}",
    )
    figures = f"[float(r[{column}]) for r in rows]"
    body = {
        "sum": f"out = {_FIGURE}(sum({figures}))",
        "mean": f"v = {figures}; out = {_FIGURE}(sum(v) / len(v))",
        "max": f"out = {_FIGURE}(max({figures}))",
        "min": f"out = {_FIGURE}(min({figures}))",
    }[op]
    return resolved, ([*filters, f"r[{column}].strip()"], body)


def _unread(
    text: str,
    words: set[str],
    header: Sequence[str],
    table: Sequence[Sequence[str]],
    named: Sequence[int],
) -> str | None:
    """The first word of the request code cannot account for, or None (pure)."""
    known = set(_FILLER) | {"how", "many"} | {w for names in _AGGREGATES.values() for w in names}
    for i in named:
        known |= {w for w in words if _says(header[i], {w}, w)}
        known |= {c.lower() for r in table for c in (r[i],) if c}
        known |= {f"{r[i].lower()}s" for r in table if r[i]}
    for word in sorted(content_words(text)):
        if "/" in word or "." in word or word in known or word.replace(".", "").isdigit():
            continue
        if word.lstrip("-").replace(".", "", 1).isdigit():
            continue
        return word
    return None


def _label(
    text: str,
    header: Sequence[str],
    named: Sequence[int],
    numeric: set[int],
    where: Sequence[tuple[int, str]],
) -> int | None:
    """The text column a "which X" / "what X" names (pure): the one named right after
    the question word, or None."""
    conditioned = {i for i, _ in where}
    for m in _LABEL.finditer(text):
        word = m.group(1) or m.group(2)
        for i in named:
            if i not in numeric and i not in conditioned and _says(header[i], {word}, word):
                return i
    return None


def _holds(value: Decimal, op: str, bound: Decimal) -> bool:
    return {
        ">": value > bound,
        "<": value < bound,
        ">=": value >= bound,
        "<=": value <= bound,
    }[op]


def _which(
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    label: int,
    column: int,
    aggregates: set[str],
) -> tuple[Resolved, bool, str] | str:
    """Which value of column ``label`` has the largest or smallest value of ``column``
    (summed per value when values repeat and a total is asked), whether it was summed,
    and ``max`` or ``min``; or why it cannot be said."""
    extremes = aggregates & {"max", "min"}
    if len(extremes) != 1 or aggregates - {"max", "min", "sum"}:
        return "not one of largest or smallest asked"
    pick = max if extremes == {"max"} else min
    totals: dict[str, Decimal] = {}
    names: dict[str, str] = {}
    repeats = False
    for r in rows:
        n = _number(r[column])
        if n is None or not r[label]:
            continue
        key = r[label].lower()
        repeats = repeats or key in totals
        names.setdefault(key, r[label])
        totals[key] = totals.get(key, Decimal(0)) + n
    if not totals:
        return f"column {header[column]!r} holds no number"
    if repeats and "sum" not in aggregates:
        return f"the values of {header[label]!r} repeat and no total is asked"
    best = pick(totals.values())
    winners = sorted(names[k] for k, v in totals.items() if v == best)
    others = sorted(names[k] for k, v in totals.items() if v != best)[:_MAX_OTHERS]
    how = "total " if repeats else ""
    word = "largest" if pick is max else "smallest"
    found = Resolved(
        values=winners,
        numbers=False,
        others=others,
        seen=f"code found the {header[label]} with the {word} {how}{header[column]}: "
        f"{', '.join(winners)} ({_show(best)})",
    )
    return found, repeats, "max" if pick is max else "min"


def stated_values(
    resolved: Resolved, stated: Sequence[str], answer: str, request: str = ""
) -> str | None:
    """Why ``answer`` does not state what code computed, or None (pure). For a number,
    ``stated`` is the numbers the answer states that the request does not: the first
    must equal it (a mean matches when rounded to the answer's decimals); for a name,
    the answer must say it as a word and say no other value of its column."""
    if resolved.numbers:
        if not stated:
            return "the output states no number"
        first = _number(stated[0])
        expected = [Decimal(v) for v in resolved.values]
        if first is None or not any(_same(first, v, resolved.approximate) for v in expected):
            return f"the output states {stated[0]}"
        return None
    low = answer.lower()
    if not any(_says_word(v, low) for v in resolved.values):
        return "the output does not state it"
    asked = request.lower()
    also = [
        v
        for v in resolved.others
        if _says_word(v, low) and not _says_word(v, asked)  # the request's own: said back
    ]
    if also:
        return f"the output also states {', '.join(also)}"
    return None


def _says_word(value: str, text: str) -> bool:
    """Whether lowercase ``text`` says ``value`` as a word (not inside a longer one)."""
    return re.search(rf"(?<![\w-]){re.escape(value.lower())}(?![\w-])", text) is not None


def _same(stated: Decimal, value: Decimal, approximate: bool) -> bool:
    """Equal; or, for a mean (``approximate``) that is no whole number, equal once
    rounded to the stated number's decimals."""
    if stated == value:
        return True
    if not approximate or value == value.to_integral_value():
        return False
    places = max(0, -int(stated.as_tuple().exponent))
    return abs(value - stated) <= Decimal(5) / Decimal(10) ** (places + 1)
