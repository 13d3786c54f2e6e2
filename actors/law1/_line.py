"""Law 1 reading of a whole command line: brace expansion, and what an earlier command
changes for the later ones (``cd``, names linked or moved into place); ``trap`` and
``alias``, which keep command text to run later."""

from __future__ import annotations

import os
import re
from dataclasses import replace
from itertools import pairwise

from ._core import (
    _MAX_DEPTH,
    GlobTooWide,
    _classify_simple,
    _Ctx,
    _expand,
    _options,
    _program,
    _strip_keywords,
    _text_reason,
    _unwrap,
)
from ._lexer import _parse, _Simple, _Word

_MAX_CWDS = 4  # directories a line may cd into before relative paths count as unknown
_BRACE_MAX = 4096  # words one brace expression may expand to


class BraceTooWide(GlobTooWide):
    """A brace expression expands to more words than Law 1 reads."""


def _classify_line(command: str, ctx: _Ctx) -> str | None:
    """Classify each simple command of ``command`` in order, under every directory an
    earlier ``cd`` may have moved to (a subshell's ``cd`` ends with it, so the union of
    all is read), with the names earlier commands linked or moved data to."""
    if ctx.depth > _MAX_DEPTH:
        return "command nests too deeply to classify"
    parsed = _parse(command)
    cwds: list[str | None] = [ctx.cwd]
    linked = set(ctx.linked)
    for n, simple in enumerate(parsed.commands):
        if _strip_keywords(simple.words):  # not a for/case header, whose words are data
            simple = _Simple(_expand_braces(simple.words), simple.redirects)
        for cwd in cwds:
            here = replace(ctx, cwd=cwd, linked=frozenset(linked), earlier=ctx.earlier or n > 0)
            reason = _classify_simple(simple, here)
            if reason:
                return reason
        _after(simple.words, cwds, linked, ctx)
    for sub in parsed.substitutions:
        reason = _classify_line(sub, ctx.deeper())
        if reason:
            return reason
    return None


# =========================================================================== braces
_SEQUENCE = re.compile(
    r"(-?\d+)\.\.(-?\d+)(?:\.\.(-?\d+))?|([A-Za-z])\.\.([A-Za-z])(?:\.\.(-?\d+))?"
)


def _expand_braces(words: list[_Word]) -> list[_Word]:
    """Words with unquoted ``{a,b}`` / ``{1..3}`` expanded as bash does (bounded)."""
    out: list[_Word] = []
    for w in words:
        alternatives = _braces(w.text) if w.brace else [w.text]
        if len(alternatives) > 1:
            out.extend(replace(w, text=a, brace=False) for a in alternatives)
        else:
            out.append(w)
    return out


def _braces(text: str) -> list[str]:
    """Every word ``text`` expands to; raises :class:`BraceTooWide` past ``_BRACE_MAX``."""
    pending, done = [text], []
    while pending:
        word = pending.pop()
        split = _first_brace(word)
        if split is None:
            done.append(word)
        else:
            prefix, alternatives, suffix = split
            pending.extend(prefix + a + suffix for a in reversed(alternatives))
        if len(done) + len(pending) > _BRACE_MAX:
            raise BraceTooWide(text)
    return done


def _first_brace(text: str) -> tuple[str, list[str], str] | None:
    """The first expandable brace of ``text``: what precedes it, its alternatives, the rest."""
    start = text.find("{")
    while start >= 0:
        depth, cuts, end = 0, [start], -1
        for j in range(start, len(text)):
            c = text[j]
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    end = j
                    break
            elif c == "," and depth == 1:
                cuts.append(j)
        if end < 0:
            return None
        body = text[start + 1 : end]
        if len(cuts) > 1:
            cuts.append(end)
            alternatives = [text[a + 1 : b] for a, b in pairwise(cuts)]
            return text[:start], alternatives, text[end + 1 :]
        m = _SEQUENCE.fullmatch(body)
        if m:
            return text[:start], _sequence(m, text), text[end + 1 :]
        start = text.find("{", start + 1)
    return None


def _sequence(m: re.Match[str], text: str) -> list[str]:
    if m.group(1) is not None:
        a, b = int(m.group(1)), int(m.group(2))
    else:
        a, b = ord(m.group(4)), ord(m.group(5))
    step = abs(int(m.group(3) or m.group(6) or 1)) or 1
    if abs(b - a) // step + 1 > _BRACE_MAX:
        raise BraceTooWide(text)
    values = range(a, b + 1, step) if a <= b else range(a, b - 1, -step)
    return [str(v) if m.group(1) is not None else chr(v) for v in values]


# =========================================================================== line state
_CD = frozenset({"cd", "pushd"})
_LINKERS = frozenset({"ln", "link", "mv", "cp"})
_CP_LINKS = frozenset({"link", "symbolic-link", "archive", "no-dereference"})


def _after(words: list[_Word], cwds: list[str | None], linked: set[str], ctx: _Ctx) -> None:
    """Record what a command changes for the commands after it on the line."""
    words = _strip_keywords(words)
    here = ctx
    while words and not words[0].dynamic:
        step = _unwrap(words, here)
        if step is None:
            break
        words, here = step
    if not words or words[0].dynamic:
        return
    program = _program(words[0].text)
    if program in _CD:
        _cd(words[1:], cwds, ctx)
    elif program in _LINKERS:
        _links(program, words[1:], cwds, linked, here)


def _cd(args: list[_Word], cwds: list[str | None], ctx: _Ctx) -> None:
    o = _options(args, "", stop_at_operand=True)
    if o.operands and o.operands[0].text in ("-", "+0", "-0"):
        return  # back to a directory already in the list
    target = o.operands[0] if o.operands else _Word("~", tilde=True)
    new: list[str | None] = []
    for cwd in cwds:
        if target.dynamic or cwd is None:
            new.append(None)
        else:
            try:
                new.extend(_expand(target, cwd)[:1])
            except GlobTooWide:
                new.append(None)
    for c in new:
        if c not in cwds:
            cwds.append(c)
    if len(cwds) > _MAX_CWDS:
        cwds[:] = [ctx.cwd, None]


def _links(
    program: str, args: list[_Word], cwds: list[str | None], linked: set[str], ctx: _Ctx
) -> None:
    """Names ``ln``/``mv``/``cp -l|-s|-a|-P`` make point at data that already existed:
    a later overwrite of such a name loses that data, though the name is new."""
    o = _options(args, "tS", ("target-directory", "suffix"))
    if program == "cp" and not (o.flags & set("adPls") or o.longs.keys() & _CP_LINKS):
        return
    operands = list(o.operands)
    directory = o.values.get("t")
    if directory is not None:
        operands.append(directory)
    if ctx.dynamic or any(w.dynamic for w in operands):
        linked.add("*")
        return
    for cwd in cwds:
        if cwd is None:
            linked.add("*")
            continue
        paths = [p for w in operands for p in _expand(w, cwd)]
        linked.update(paths)
        for dest in paths[-1:]:
            linked.update(os.path.join(dest, os.path.basename(p.rstrip("/"))) for p in paths)


# =========================================================================== trap, alias
def _trap(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    """``trap ACTION SIGNAL…`` runs ACTION later: read it as a command."""
    o = _options(args, "", stop_at_operand=True)
    if o.flags & {"p", "l"} or len(o.operands) < 2:
        return None
    action = o.operands[0]
    if action.text == "-" or re.fullmatch(r"\d+", action.text):
        return None  # resets the listed signals
    return _text_reason(program, [action], ctx)


def _alias(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    """``alias NAME=TEXT``: TEXT runs later with any arguments, so it is read as a command
    whose arguments are only known at run time (``alias x=rm`` is rm)."""
    for w in args:
        name, eq, value = w.text.partition("=")
        if eq and value:
            reason = _text_reason(
                f"{program} {name}", [replace(w, text=value)], ctx.deeper(dynamic=True)
            )
            if reason:
                return reason
    return None
