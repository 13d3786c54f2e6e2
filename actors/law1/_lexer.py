"""The POSIX-shell lexer: a command line split into simple commands, words and
redirections, with the text of every substitution (used by Law 1 and by blocked-target
scanning).

It honours single and double quotes, backslash escapes, ``$'…'``, heredocs and comments, and
collects the text of every ``$(…)``, backtick and ``<(…)``/``>(…)`` substitution (also inside
double quotes and unquoted heredocs). An unbalanced quote or substitution, or a redirection
without a target, raises :class:`ShellSyntaxError`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field


class ShellSyntaxError(ValueError):
    """A command the lexer cannot read (unbalanced quote, substitution, …)."""


# =========================================================================== lexer
@dataclass(frozen=True, slots=True)
class _Word:
    text: str
    dynamic: bool = False  # holds an expansion: value only known at run time
    glob: bool = False  # holds an unquoted *, ? or [
    quoted: bool = False  # some part was quoted or escaped
    tilde: bool = False  # starts with an unquoted ~
    brace: bool = False  # holds an unquoted { (a candidate for brace expansion)


@dataclass(frozen=True, slots=True)
class _Redirect:
    op: str
    target: _Word


@dataclass(slots=True)
class _Simple:
    words: list[_Word] = field(default_factory=list)
    redirects: list[_Redirect] = field(default_factory=list)


@dataclass(slots=True)
class _Parsed:
    commands: list[_Simple]
    substitutions: list[str]


_OPERATORS = ("&&", "||", ";;&", ";;", ";&", "|&", "&", ";", "|", "(", ")")
_REDIRECTS = ("&>>", "&>", "<<<", "<<-", "<<", "<&", "<>", ">>", ">&", ">|", "<", ">")
_WORD_STOP = frozenset(" \t\n;&|()<>")
_DOUBLE_ESCAPES = frozenset('$`"\\\n')
_PARAMETER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-]")


class _Lexer:
    """Turns shell text into tokens: ("word", _Word), ("op", str), ("redir", _Redirect)."""

    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0
        self.tokens: list[tuple[str, object]] = []
        self.subs: list[str] = []
        self._heredocs: list[tuple[str, bool, bool]] = []

    # ----------------------------------------------------------------- top level
    def run(self) -> list[tuple[str, object]]:
        s = self.s
        while self.i < len(s):
            c = s[self.i]
            if c in " \t":
                self.i += 1
            elif s.startswith("\\\n", self.i):
                self.i += 2
            elif c == "\n":
                self.i += 1
                self.tokens.append(("op", "\n"))
                self._read_heredocs()
            elif c == "#":
                end = s.find("\n", self.i)
                self.i = len(s) if end < 0 else end
            elif c in "<>" and s.startswith("(", self.i + 1):
                inner, self.i = self._balanced(self.i + 1, "(", ")")
                self.subs.append(inner)
                self.tokens.append(("word", _Word(c + "(…)", dynamic=True)))
            elif c in "<>" or s.startswith("&>", self.i):
                self._redirect()
            elif c in ";&|()":
                op = next(o for o in _OPERATORS if s.startswith(o, self.i))
                self.i += len(op)
                self.tokens.append(("op", op))
            else:
                j = self.i
                while j < len(s) and s[j].isdigit():
                    j += 1
                if j > self.i and j < len(s) and s[j] in "<>":
                    self.i = j  # an io number such as the 2 of 2>err
                    self._redirect()
                else:
                    self.tokens.append(("word", self._word()))
        return self.tokens

    def scan(self) -> None:
        """Collect substitutions of text read as if inside double quotes."""
        s = self.s
        while self.i < len(s):
            c = s[self.i]
            if c == "\\":
                self.i += 2
            elif c == "$":
                self._dollar([], in_double=True)
            elif c == "`":
                self._backtick([])
            else:
                self.i += 1

    # ----------------------------------------------------------------- pieces
    def _redirect(self) -> None:
        s = self.s
        op = next(r for r in _REDIRECTS if s.startswith(r, self.i))
        self.i += len(op)
        while self.i < len(s) and s[self.i] in " \t":
            self.i += 1
        if self.i >= len(s) or s[self.i] in "\n;&|()<>":
            raise ShellSyntaxError(f"redirection {op!r} has no target")
        target = self._word()
        if op in ("<<", "<<-"):
            self._heredocs.append((target.text, target.quoted, op == "<<-"))
        self.tokens.append(("redir", _Redirect(op, target)))

    def _word(self) -> _Word:
        s = self.s
        parts: list[str] = []
        dynamic = glob = quoted = brace = False
        tilde = s[self.i] == "~"
        while self.i < len(s):
            c = s[self.i]
            if c in _WORD_STOP:
                break
            if c == "\\":
                if self.i + 1 < len(s):
                    if s[self.i + 1] != "\n":
                        parts.append(s[self.i + 1])
                        quoted = True
                    self.i += 2
                else:
                    parts.append("\\")
                    self.i += 1
            elif c == "'":
                end = s.find("'", self.i + 1)
                if end < 0:
                    raise ShellSyntaxError("unbalanced single quote")
                parts.append(s[self.i + 1 : end])
                self.i = end + 1
                quoted = True
            elif c == '"':
                dynamic |= self._double(parts)
                quoted = True
            elif c == "$":
                if s.startswith("$'", self.i):
                    quoted = True
                dynamic |= self._dollar(parts, in_double=False)
            elif c == "`":
                self._backtick(parts)
                dynamic = True
            else:
                glob |= c in "*?["
                brace |= c == "{"
                parts.append(c)
                self.i += 1
        text = "".join(parts)
        return _Word(text, dynamic=dynamic, glob=glob, quoted=quoted, tilde=tilde, brace=brace)

    def _double(self, parts: list[str]) -> bool:
        s = self.s
        self.i += 1
        dynamic = False
        while self.i < len(s):
            c = s[self.i]
            if c == '"':
                self.i += 1
                return dynamic
            if c == "\\" and self.i + 1 < len(s) and s[self.i + 1] in _DOUBLE_ESCAPES:
                if s[self.i + 1] != "\n":
                    parts.append(s[self.i + 1])
                self.i += 2
            elif c == "$":
                dynamic |= self._dollar(parts, in_double=True)
            elif c == "`":
                self._backtick(parts)
                dynamic = True
            else:
                parts.append(c)
                self.i += 1
        raise ShellSyntaxError("unbalanced double quote")

    def _dollar(self, parts: list[str], *, in_double: bool) -> bool:
        """Read an expansion at ``$``; True when its value is only known at run time."""
        s = self.s
        nxt = s[self.i + 1 : self.i + 2]
        if s.startswith("$((", self.i):
            inner, self.i = self._balanced(self.i + 1, "(", ")")
            parts.append(f"$({inner})")
            return True
        if nxt == "(":
            inner, self.i = self._balanced(self.i + 1, "(", ")")
            self.subs.append(inner)
            parts.append("$(…)")
            return True
        if nxt == "{":
            inner, self.i = self._balanced(self.i + 1, "{", "}")
            child = _Lexer(inner)
            child.scan()
            self.subs.extend(child.subs)
            parts.append("${" + inner + "}")
            return True
        if nxt == "'" and not in_double:
            j = self.i + 2
            buf: list[str] = []
            while j < len(s) and s[j] != "'":
                if s[j] == "\\" and j + 1 < len(s):
                    buf.append(s[j : j + 2])
                    j += 2
                else:
                    buf.append(s[j])
                    j += 1
            if j >= len(s):
                raise ShellSyntaxError("unbalanced $' quote")
            parts.append(_ansi_c("".join(buf)))
            self.i = j + 1
            return False
        if nxt == '"' and not in_double:
            self.i += 1  # $"…" is a translated string: read it as "…"
            return False
        m = _PARAMETER.match(s, self.i + 1)
        if m:
            parts.append("$" + m.group())
            self.i = m.end()
            return True
        parts.append("$")
        self.i += 1
        return False

    def _backtick(self, parts: list[str]) -> None:
        s = self.s
        j = self.i + 1
        buf: list[str] = []
        while j < len(s) and s[j] != "`":
            if s[j] == "\\" and j + 1 < len(s) and s[j + 1] in "`\\$":
                buf.append(s[j + 1])
                j += 2
            else:
                buf.append(s[j])
                j += 1
        if j >= len(s):
            raise ShellSyntaxError("unbalanced backtick")
        self.subs.append("".join(buf))
        parts.append("`…`")
        self.i = j + 1

    def _balanced(self, start: int, open_: str, close: str) -> tuple[str, int]:
        """The text between s[start] == open_ and its matching close, and the index after."""
        s = self.s
        depth = 0
        j = start
        while j < len(s):
            c = s[j]
            if c == "\\":
                j += 2
                continue
            if c == "'":
                end = s.find("'", j + 1)
                if end < 0:
                    raise ShellSyntaxError("unbalanced single quote")
                j = end + 1
                continue
            if c == '"':
                j = self._skip_double(j)
                continue
            if c == "`":
                end = j + 1
                while end < len(s) and s[end] != "`":
                    end += 2 if s[end] == "\\" else 1
                if end >= len(s):
                    raise ShellSyntaxError("unbalanced backtick")
                j = end + 1
                continue
            if c == open_:
                depth += 1
            elif c == close:
                depth -= 1
                if depth == 0:
                    return s[start + 1 : j], j + 1
            j += 1
        raise ShellSyntaxError(f"unbalanced {open_!r}")

    def _skip_double(self, j: int) -> int:
        s = self.s
        j += 1
        while j < len(s):
            c = s[j]
            if c == "\\":
                j += 2
            elif c == '"':
                return j + 1
            elif s.startswith("$(", j):
                _, j = self._balanced(j + 1, "(", ")")
            else:
                j += 1
        raise ShellSyntaxError("unbalanced double quote")

    def _read_heredocs(self) -> None:
        s = self.s
        for delim, quoted, strip_tabs in self._heredocs:
            body: list[str] = []
            while self.i < len(s):
                end = s.find("\n", self.i)
                line = s[self.i : len(s) if end < 0 else end]
                self.i = len(s) if end < 0 else end + 1
                if (line.lstrip("\t") if strip_tabs else line) == delim:
                    break
                body.append(line)
            if not quoted:
                child = _Lexer("\n".join(body))
                child.scan()
                self.subs.extend(child.subs)
        self._heredocs.clear()


def _ansi_c(text: str) -> str:
    try:
        return text.encode("latin-1", "backslashreplace").decode("unicode_escape")
    except UnicodeDecodeError:
        return text


def _parse(command: str) -> _Parsed:
    lexer = _Lexer(command)
    tokens = lexer.run()
    commands: list[_Simple] = []
    current = _Simple()
    for kind, value in tokens:
        if kind == "op":
            if current.words or current.redirects:
                commands.append(current)
                current = _Simple()
        elif kind == "redir":
            assert isinstance(value, _Redirect)
            current.redirects.append(value)
        else:
            assert isinstance(value, _Word)
            current.words.append(value)
    if current.words or current.redirects:
        commands.append(current)
    return _Parsed(commands, lexer.subs)
