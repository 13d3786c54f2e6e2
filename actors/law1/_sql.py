"""Law 1 handlers: SQL clients running statements that change data."""

from __future__ import annotations

import re

from ._core import _Ctx, _long_word, _options
from ._lexer import _Word

_SQL_CHANGES = re.compile(
    r"\b(drop|delete|truncate|update|alter|grant|revoke|replace(?!\s*\())\b",
    re.IGNORECASE,
)


def _sql_reason(program: str, sql: str | None) -> str | None:
    if sql is None:
        return f"{program}: runs SQL read from a file or stdin"
    match = _SQL_CHANGES.search(sql)
    return f"{program}: SQL {match.group(1).upper()} changes the database" if match else None


def _sqlite(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    o = _options(args, "", ("cmd", "init", "separator", "newline", "nullvalue"))
    if len(o.operands) < 2:
        return _sql_reason(program, None) if o.operands else None
    texts = [w.text for w in o.operands[1:]]
    if any(t.startswith((".read", ".import", ".restore", ".save", ".backup")) for t in texts):
        return f"{program}: dot-command writes or runs files"
    return _sql_reason(program, " ".join(texts))


def _psql(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    o = _options(args, "cdfhpUvoLTPF", ("command", "dbname", "file", "host", "port", "username"))
    if "f" in o.values or "file" in o.longs:
        return _sql_reason(program, None)
    command = o.values.get("c") or _long_word(o, "command")
    if command is None:
        return None if "l" in o.flags or "list" in o.longs else _sql_reason(program, None)
    return _sql_reason(program, command.text)


def _mysql(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    o = _options(args, "eDhPuSp", ("execute", "database", "host", "port", "user", "socket"))
    sql = o.values.get("e")
    text = sql.text if sql is not None else o.longs.get("execute")
    return _sql_reason(program, text)
