"""Law 1 — never harm the user's environment without explicit confirmation.

The paper's Law 1 (§9): the system must not take irreversible actions on user data or
environment without explicit authorization for that specific action. Irreversible
actions are file deletion, overwriting existing data, sending messages and modifying
system configuration.

This module decides, by **parsing** a shell command (never by string prefix), whether
running it would be irreversible. The Executor's tool registry asks for a human's
confirmation when it is (DESIGN §4.8).

How a command is read:

* A small POSIX-shell lexer splits it into simple commands at ``;``, ``&&``, ``||``,
  ``|``, ``|&``, ``&``, newlines and parentheses; it honours single and double quotes,
  backslash escapes, ``$'…'``, heredocs, comments, and collects the text of every
  ``$(…)``, backtick and ``<(…)``/``>(…)`` substitution (also inside double quotes and
  unquoted heredocs), which is classified as a command of its own.
* Shell keywords (``if``, ``then``, ``do``, ``!``, ``{`` …) and leading ``NAME=value``
  assignments are skipped. Wrappers are unwrapped: ``sudo``, ``doas``, ``env``,
  ``nice``, ``ionice``, ``time``, ``command``, ``builtin``, ``exec``, ``nohup``,
  ``setsid``, ``stdbuf``, ``unbuffer``, ``timeout N``, ``chroot DIR``, ``busybox``,
  ``flock``, ``strace``, ``xargs [opts]``, ``parallel``, ``watch``. The program is the
  basename of the first word, so ``/bin/rm``, ``./rm``, ``\\rm`` and ``"rm"`` are all rm.
* ``sh -c``/``bash -c``/``su -c``/``eval``/``ssh host CMD``/``env -S`` strings are parsed
  recursively (and :func:`parse_commands` lists their commands, so blocked targets are
  found inside them); a program whose name is only known at run time (``$CMD``) is
  irreversible.
* Overwrites are checked against the file system relative to ``cwd``: a redirection
  ``>``/``>|``/``&>`` onto an existing file, ``tee`` without ``-a``, ``mv``/``cp``/
  ``install``/``ln -f`` onto an existing destination (``-n``, ``--no-clobber``,
  ``--update=none`` and ``--backup`` make them safe), ``sort -o``, ``curl -o``,
  ``wget -O``, ``tar -cf`` onto an existing archive; ``tar -x`` of a member whose name
  exists (the archive's member list is read; an archive that cannot be read, such as
  stdin, counts when the destination is not empty; ``-k``/``--skip-old-files``/``-O`` are
  safe); ``rsync`` onto existing files (the source tree is compared with the destination;
  ``-n``, ``-b``, ``--ignore-existing`` are safe; a remote destination always counts);
  ``patch`` (edits in place, unless ``--dry-run`` or ``-b``). ``>>`` appends are allowed and
  ``/dev/null`` (and the other standard devices) never counts. A destination that is
  only known at run time (``xargs``, ``find -exec``, ``$VAR``) counts as existing.
* Other people's data: SQL clients (``sqlite3``, ``psql``, ``mysql``) running DROP, DELETE,
  TRUNCATE, UPDATE, ALTER, REPLACE, GRANT or REVOKE, or SQL from a file or stdin; ``scp``
  to another host or onto an existing file; ``gh``/``aws``/``gcloud``/``az`` subcommands
  that delete, remove, terminate or destroy; ``git apply`` and ``git tag -d``/``-f``; an
  ``awk`` program that prints into a file with ``>``; ``openssl -out``, ``ffmpeg -y`` and
  ``convert`` onto an existing file.
* Any write — append included — to system locations (``/etc``, ``/usr``, ``/boot`` …) or
  to a dotfile in the home directory outside ``cwd`` modifies system configuration.

Unparseable commands (an unbalanced quote or substitution, a redirection without a
target) are irreversible with the reason ``"cannot parse: …"``.
"""

from __future__ import annotations

import glob as _glob
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from itertools import pairwise
from pathlib import Path

import msgspec

__all__ = [
    "ALLOWED",
    "Law1Verdict",
    "ShellCommand",
    "ShellSyntaxError",
    "classify_shell",
    "classify_write",
    "parse_commands",
]


class Law1Verdict(msgspec.Struct, frozen=True):
    """Whether an action is irreversible and, if so, why (names the program)."""

    irreversible: bool
    reason: str = ""


ALLOWED = Law1Verdict(False, "")
"""The verdict for an action that is not irreversible."""


class ShellSyntaxError(ValueError):
    """A command the lexer cannot read (unbalanced quote, substitution, …)."""


class ShellCommand(msgspec.Struct, frozen=True):
    """One simple command of a command line, after keywords and wrappers are removed.

    ``program`` is the basename of the program ("" for a bare redirection), ``args``
    its arguments with quotes removed, ``redirects`` the targets of its redirections,
    ``inline`` the command strings among the args that it runs (``sh -c STR``, ``eval``),
    whose commands :func:`parse_commands` lists as well.
    """

    program: str
    args: tuple[str, ...] = ()
    redirects: tuple[str, ...] = ()
    inline: tuple[str, ...] = ()


# =========================================================================== public API
def classify_shell(command: str, cwd: str | os.PathLike[str]) -> Law1Verdict:
    """Decide whether running ``command`` in ``cwd`` would be irreversible.

    The first irreversible part found gives the reason, e.g. ``"rm: deletes files"``
    or ``"echo: '>' overwrites existing file 'notes.txt'"``.
    """
    try:
        reason = _classify_text(command, _Ctx(cwd=os.path.abspath(os.fspath(cwd))))
    except ShellSyntaxError as exc:
        return Law1Verdict(True, f"cannot parse: {exc}")
    return Law1Verdict(True, reason) if reason else ALLOWED


def classify_write(path: str | os.PathLike[str], workspace: str | os.PathLike[str]) -> Law1Verdict:
    """Decide whether write_file onto ``path`` (relative to ``workspace``) is irreversible.

    Writing onto an existing file overwrites its data; a new file is not irreversible.
    """
    full = Path(workspace) / path
    if full.is_symlink() or (full.exists() and not full.is_dir()):
        return Law1Verdict(True, f"write_file: overwrites existing file '{path}'")
    return ALLOWED


def parse_commands(command: str) -> list[ShellCommand]:
    """Every simple command of ``command``, wrappers removed.

    Commands inside substitutions (``$(…)``, backticks, ``<(…)``) and inside command strings
    (``sh -c``/``bash -c``…, ``su -c``, ``eval``) are listed too, after the command that
    holds them. Raises ShellSyntaxError when the command cannot be read, or nests deeper
    than the classifier follows.
    """
    return _parse_commands(command, 0)


def _parse_commands(command: str, depth: int) -> list[ShellCommand]:
    if depth > _MAX_DEPTH:
        raise ShellSyntaxError("command nests too deeply to read")
    parsed = _parse(command)
    out: list[ShellCommand] = []
    inner: list[str] = []
    for simple in parsed.commands:
        words = _strip_keywords(simple.words)
        ctx = _Ctx(cwd=None)
        while words:
            step = _unwrap(words, ctx)
            if step is None:
                break
            words, ctx = step
        program = _program(words[0].text) if words else ""
        strings = _command_strings(program, words[1:])
        out.append(
            ShellCommand(
                program=program,
                args=tuple(w.text for w in words[1:]),
                redirects=tuple(r.target.text for r in simple.redirects if _writes(r)),
                inline=tuple(strings),
            )
        )
        inner.extend(strings)
    for text in (*parsed.substitutions, *inner):
        out.extend(_parse_commands(text, depth + 1))
    return out


def _command_strings(program: str, args: list[_Word]) -> list[str]:
    """The command text a shell, ``su -c`` or ``eval`` runs (empty for other programs)."""
    if program in _SHELLS:
        o = _shell_options(args)
        if ("c" in o.flags or "command" in o.longs) and o.operands and not o.operands[0].dynamic:
            return [o.operands[0].text]
    elif program == "su":
        text = _su_command(args)
        return [text.text] if text is not None and not text.dynamic else []
    elif program == "eval" and args and not any(w.dynamic for w in args):
        return [" ".join(w.text for w in args)]
    return []


# =========================================================================== lexer
@dataclass(frozen=True, slots=True)
class _Word:
    text: str
    dynamic: bool = False  # holds an expansion: value only known at run time
    glob: bool = False  # holds an unquoted *, ? or [
    quoted: bool = False  # some part was quoted or escaped
    tilde: bool = False  # starts with an unquoted ~


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
        dynamic = glob = quoted = False
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
                parts.append(c)
                self.i += 1
        return _Word("".join(parts), dynamic=dynamic, glob=glob, quoted=quoted, tilde=tilde)

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


# =========================================================================== context
_MAX_DEPTH = 8


@dataclass(frozen=True, slots=True)
class _Ctx:
    cwd: str | None  # None: the file system the command sees is unknown (remote host)
    dynamic: bool = False  # arguments are appended at run time (xargs, find -exec)
    depth: int = 0

    def deeper(self, **changes: object) -> _Ctx:
        return replace(self, depth=self.depth + 1, **changes)  # type: ignore[arg-type]


def _classify_text(command: str, ctx: _Ctx) -> str | None:
    if ctx.depth > _MAX_DEPTH:
        return "command nests too deeply to classify"
    parsed = _parse(command)
    for simple in parsed.commands:
        reason = _classify_simple(simple, ctx)
        if reason:
            return reason
    for sub in parsed.substitutions:
        reason = _classify_text(sub, ctx.deeper())
        if reason:
            return reason
    return None


_KEYWORDS = frozenset(
    {"if", "then", "else", "elif", "fi", "do", "done", "while", "until", "esac", "!", "{", "}"}
)
_HEADERS = frozenset({"for", "select", "case"})
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")


def _strip_keywords(words: list[_Word]) -> list[_Word]:
    i = 0
    while i < len(words):
        w = words[i]
        plain = not (w.quoted or w.dynamic)
        if plain and w.text in _HEADERS:
            return []
        if plain and w.text == "function":
            i += 2
        elif (plain and w.text in _KEYWORDS) or _ASSIGNMENT.match(w.text):
            i += 1
        else:
            break
    return words[i:]


def _classify_simple(simple: _Simple, ctx: _Ctx) -> str | None:
    words = _strip_keywords(simple.words)
    program = _program(words[0].text) if words and not words[0].dynamic else "shell"
    for redirect in simple.redirects:
        if _writes(redirect):
            reason = _write_reason(
                program, redirect.target, ctx, append=redirect.op in (">>", "&>>"), how=redirect.op
            )
            if reason:
                return reason
    return _classify_argv(words, ctx) if words else None


def _writes(redirect: _Redirect) -> bool:
    if redirect.op not in (">", ">|", "&>", ">&", ">>", "&>>"):
        return False
    return not (redirect.op == ">&" and re.fullmatch(r"\d+-?|-", redirect.target.text))


def _classify_argv(words: list[_Word], ctx: _Ctx) -> str | None:
    if ctx.depth > _MAX_DEPTH:
        return "command nests too deeply to classify"
    while words:
        if words[0].dynamic:
            return f"{words[0].text}: program not known before the command runs"
        special = _SPECIAL_PREFIXES.get(_program(words[0].text))
        if special is not None:
            return special(_program(words[0].text), words[1:], ctx)
        step = _unwrap(words, ctx)
        if step is None:
            break
        words, ctx = step
    if not words:
        return None
    if words[0].dynamic:
        return f"{words[0].text}: program not known before the command runs"
    program = _program(words[0].text)
    args = words[1:]
    if [a.text for a in args] in (["--help"], ["--version"]):
        return None
    handler = _handler(program)
    return handler(program, args, ctx) if handler else None


_VERSIONED = re.compile(r"^(python|pypy|pip|ruby|perl|node|php|lua)\d*(\.\d+)*$")


def _program(text: str) -> str:
    name = text.rstrip("/").rsplit("/", 1)[-1] or text
    m = _VERSIONED.match(name)
    if m:
        return m.group(1)
    if name.startswith("mkfs"):
        return "mkfs"
    return name


# =========================================================================== options
@dataclass(slots=True)
class _Opts:
    flags: set[str] = field(default_factory=set)  # short option letters seen
    longs: dict[str, str | None] = field(default_factory=dict)  # --name[=value]
    values: dict[str, _Word] = field(default_factory=dict)  # short options' arguments
    operands: list[_Word] = field(default_factory=list)
    dashdash: bool = False


def _options(
    args: list[_Word],
    short_arg: str = "",
    long_arg: tuple[str, ...] = (),
    *,
    stop_at_operand: bool = False,
) -> _Opts:
    """Split GNU-style arguments into flags, long options, option values and operands."""
    o = _Opts()
    i = 0
    while i < len(args):
        w = args[i]
        t = w.text
        if t == "--":
            o.dashdash = True
            o.operands.extend(args[i + 1 :])
            break
        if t.startswith("--") and not w.dynamic:
            name, eq, value = t[2:].partition("=")
            if not eq and name in long_arg and i + 1 < len(args):
                i += 1
                value, eq = args[i].text, "="
            o.longs[name] = value if eq else None
        elif t.startswith("-") and len(t) > 1 and not w.dynamic:
            for j in range(1, len(t)):
                ch = t[j]
                o.flags.add(ch)
                if ch in short_arg:
                    if j + 1 < len(t):
                        o.values[ch] = replace(w, text=t[j + 1 :], tilde=False)
                    elif i + 1 < len(args):
                        i += 1
                        o.values[ch] = args[i]
                    break
        else:
            o.operands.append(w)
            if stop_at_operand:
                o.operands.extend(args[i + 1 :])
                break
        i += 1
    return o


# =========================================================================== wrappers
@dataclass(frozen=True, slots=True)
class _Wrapper:
    short_arg: str = ""
    long_arg: tuple[str, ...] = ()
    skip: int = 0  # operands before the wrapped command (timeout's duration, chroot's dir)
    assignments: bool = False  # NAME=value words may precede the command
    dynamic: bool = False  # arguments come from input at run time


_WRAPPERS: dict[str, _Wrapper] = {
    "sudo": _Wrapper(
        "ugCDhprtTU",
        ("user", "group", "chdir", "host", "prompt", "role", "type", "close-from", "other-user"),
        assignments=True,
    ),
    "doas": _Wrapper("uC"),
    "env": _Wrapper("uC", ("unset", "chdir"), assignments=True),
    "nice": _Wrapper("n", ("adjustment",)),
    "ionice": _Wrapper("cnpPu", ("class", "classdata")),
    "time": _Wrapper("fo", ("format", "output")),
    "builtin": _Wrapper(),
    "exec": _Wrapper("a"),
    "nohup": _Wrapper(),
    "setsid": _Wrapper(),
    "unbuffer": _Wrapper(),
    "caffeinate": _Wrapper("tw"),
    "stdbuf": _Wrapper("ioe", ("input", "output", "error")),
    "timeout": _Wrapper("sk", ("signal", "kill-after"), skip=1),
    "chroot": _Wrapper("", ("userspec", "groups"), skip=1),
    "chrt": _Wrapper(skip=1),
    "taskset": _Wrapper(skip=1),
    "busybox": _Wrapper(),
    "runuser": _Wrapper("ugG", ("user", "group")),
    "strace": _Wrapper("oepsuEabIOPSX"),
    "ltrace": _Wrapper("oepsuEaIS"),
    "xargs": _Wrapper(
        "adEILnPs",
        ("arg-file", "delimiter", "max-args", "max-procs", "max-chars", "process-slot-var"),
        dynamic=True,
    ),
}


def _unwrap(words: list[_Word], ctx: _Ctx) -> tuple[list[_Word], _Ctx] | None:
    """Remove one wrapper (sudo, env, xargs …) in front of the real command, if any."""
    program = _program(words[0].text)
    spec = _WRAPPERS.get(program)
    if spec is None:
        if program == "command":
            o = _options(words[1:], stop_at_operand=True)
            return None if o.flags & {"v", "V"} else (o.operands, ctx)
        return None
    o = _options(words[1:], spec.short_arg, spec.long_arg, stop_at_operand=True)
    rest = o.operands[spec.skip :]
    if spec.assignments:
        while rest and _ASSIGNMENT.match(rest[0].text):
            rest = rest[1:]
    if program == "env" and ("S" in o.flags or "split-string" in o.longs):
        return None  # handled by _env_split
    return rest, replace(ctx, dynamic=True) if spec.dynamic else ctx


def _env_split(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    o = _options(args, "uCS", ("unset", "chdir", "split-string"), stop_at_operand=True)
    text = o.values.get("S") or _long_word(o, "split-string")
    if text is None:
        step = _unwrap([_Word(program), *args], ctx)
        return _classify_argv(step[0], step[1]) if step else None
    rest = [w for w in o.operands if not _ASSIGNMENT.match(w.text)]
    return _text_reason("env -S", [text, *rest], ctx)


def _text_reason(label: str, words: list[_Word], ctx: _Ctx) -> str | None:
    """Classify words that a program joins and runs as shell text (eval, ssh, watch)."""
    if not words:
        return None
    # Expansions stay in the text as written ("$X", "$(…)"), so the inner parse sees
    # exactly what the inner shell will expand; the outer substitutions were already
    # classified where they appear.
    reason = _classify_text(" ".join(w.text for w in words), ctx.deeper())
    return f"{label}: {reason}" if reason else None


def _long_word(o: _Opts, name: str) -> _Word | None:
    value = o.longs.get(name)
    return _Word(value) if value is not None else None


def _eval(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    return _text_reason(program, args, ctx)


def _watch(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    o = _options(args, "nq", ("interval", "equexit"), stop_at_operand=True)
    if "x" in o.flags or "exec" in o.longs:
        return _classify_argv(o.operands, ctx.deeper())
    return _text_reason(program, o.operands, ctx)


def _parallel(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    o = _options(args, "jSNnPaIdC", ("jobs", "sshlogin", "arg-file", "delimiter", "colsep"))
    words: list[_Word] = []
    for w in o.operands:
        if w.text in (":::", "::::", ":::+", "::::+"):
            break
        words.append(w)
    if not words:
        return None
    reason = _classify_text(" ".join(w.text for w in words), ctx.deeper(dynamic=True))
    return f"{program}: {reason}" if reason else None


def _flock(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    o = _options(args, "wEc", ("timeout", "conflict-exit-code", "command"), stop_at_operand=True)
    text = o.values.get("c") or _long_word(o, "command")
    if text is not None:
        return _text_reason(program, [text], ctx)
    return _classify_argv(o.operands[1:], ctx.deeper())


def _ssh(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    o = _options(args, "BbcDEeFIiJLlmOopQRSWw", stop_at_operand=True)
    return _text_reason(f"{program} (remote)", o.operands[1:], ctx.deeper(cwd=None))


def _su(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    text = _su_command(args)
    return _text_reason(f"{program} -c", [text], ctx) if text is not None else None


def _su_command(args: list[_Word]) -> _Word | None:
    """The command string of ``su -c CMD`` / ``su --command=CMD``, if any."""
    o = _options(args, "cgGsw", ("command", "group", "shell", "whitelist-environment"))
    return o.values.get("c") or _long_word(o, "command")


_SPECIAL_PREFIXES: dict[str, Callable[[str, list[_Word], _Ctx], str | None]] = {
    "eval": _eval,
    "watch": _watch,
    "parallel": _parallel,
    "flock": _flock,
    "ssh": _ssh,
    "su": _su,
    "env": _env_split,
}


# =========================================================================== paths
_DEVICES = frozenset(
    {"/dev/null", "/dev/zero", "/dev/full", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty"}
)
_SYSTEM_DIRS = (
    "/etc",
    "/boot",
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/opt",
    "/sys",
    "/proc",
    "/root",
    "/var/lib",
    "/var/spool",
)


def _expand(word: _Word, cwd: str) -> list[str]:
    """The absolute paths a (static) word names: tilde and unquoted globs expanded."""
    text = os.path.expanduser(word.text) if word.tilde else word.text
    if word.glob:
        matches = _glob.glob(text, root_dir=None if os.path.isabs(text) else cwd)
        if matches:
            return [os.path.normpath(os.path.join(cwd, m)) for m in sorted(matches)]
    return [os.path.normpath(os.path.join(cwd, text))]


def _exempt(path: str) -> bool:
    return path in _DEVICES or path.startswith(("/dev/fd/", "/proc/self/fd/", "/dev/pts/"))


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _is_config(path: str, cwd: str) -> bool:
    if _inside(path, cwd):
        return False
    if any(_inside(path, d) for d in _SYSTEM_DIRS):
        return True
    home = os.path.expanduser("~")
    if home not in ("", "/") and path.startswith(home.rstrip("/") + "/"):
        return path[len(home.rstrip("/")) + 1 :].startswith(".")
    return False


def _write_reason(
    program: str, word: _Word, ctx: _Ctx, *, append: bool = False, how: str = ""
) -> str | None:
    """Why writing to ``word`` is irreversible (overwrite or configuration), if it is."""
    label = f"'{how}' " if how else ""
    if word.text in ("-", ""):
        return None
    if word.dynamic or ctx.cwd is None:
        return f"{program}: {label}target '{word.text}' not known before the command runs"
    for path in _expand(word, ctx.cwd):
        if _exempt(path):
            continue
        if _is_config(path, ctx.cwd):
            return f"{program}: {label}writes '{word.text}', modifying system configuration"
        if not append and os.path.lexists(path) and not os.path.isdir(path):
            return f"{program}: {label}overwrites existing file '{word.text}'"
    return None


def _into_dir(program: str, directory: _Word, sources: list[_Word], ctx: _Ctx) -> str | None:
    """Why copying ``sources`` into the existing ``directory`` is irreversible, if it is."""
    if directory.dynamic or ctx.cwd is None or ctx.dynamic or any(s.dynamic for s in sources):
        return f"{program}: destination not known before the command runs"
    for src in sources:
        for path in _expand(src, ctx.cwd):
            name = os.path.basename(path.rstrip("/"))
            target = _Word(os.path.join(directory.text, name), tilde=directory.tilde)
            reason = _write_reason(program, target, ctx)
            if reason:
                return reason
            if program == "cp" and any(os.path.isdir(p) for p in _expand(target, ctx.cwd)):
                return f"{program}: merges into existing directory '{target.text}'"
    return _write_reason(program, directory, ctx, append=True)


def _is_dir(word: _Word, ctx: _Ctx) -> bool:
    assert ctx.cwd is not None
    paths = _expand(word, ctx.cwd)
    return len(paths) == 1 and os.path.isdir(paths[0])


# =========================================================================== handlers
_Handler = Callable[[str, list[_Word], _Ctx], str | None]


def _always(why: str) -> _Handler:
    def handler(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
        return f"{program}: {why}"

    return handler


def _dd(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    for w in args:
        if w.text.startswith("of="):
            target = replace(w, text=w.text[3:], tilde=w.text[3:4] == "~")
            if target.dynamic or ctx.cwd is None:
                return f"{program}: writes raw data to '{target.text}'"
            if not all(_exempt(p) for p in _expand(target, ctx.cwd)):
                return f"{program}: writes raw data to '{target.text}'"
    return None


_COPY_SHORT = {"cp": "tS", "mv": "tS", "install": "tSmog"}


def _copy(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    o = _options(
        args,
        _COPY_SHORT.get(program, "tS"),
        ("target-directory", "suffix", "mode", "owner", "group"),
    )
    if program == "install" and ("d" in o.flags or "directory" in o.longs):
        return None
    if o.flags & {"n", "b"} or "no-clobber" in o.longs or "backup" in o.longs:
        return None
    if o.longs.get("update") in ("none", "none-fail"):
        return None
    directory = o.values.get("t") or _long_word(o, "target-directory")
    if directory is not None:
        return _into_dir(program, directory, o.operands, ctx)
    if ctx.dynamic:
        return f"{program}: destination not known before the command runs"
    if len(o.operands) < 2:
        return None
    *sources, dest = o.operands
    if dest.dynamic or ctx.cwd is None:
        return f"{program}: destination '{dest.text}' not known before the command runs"
    if "T" not in o.flags and "no-target-directory" not in o.longs and _is_dir(dest, ctx):
        return _into_dir(program, dest, sources, ctx)
    return _write_reason(program, dest, ctx)


def _ln(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    o = _options(args, "tS", ("target-directory", "suffix"))
    if not ("f" in o.flags or "force" in o.longs) or "b" in o.flags or "backup" in o.longs:
        return None
    directory = o.values.get("t") or _long_word(o, "target-directory")
    if directory is not None:
        return _into_dir(f"{program} -f", directory, o.operands, ctx)
    if ctx.dynamic:
        return f"{program} -f: destination not known before the command runs"
    if not o.operands:
        return None
    if len(o.operands) == 1:
        return _into_dir(f"{program} -f", _Word("."), o.operands, ctx)
    *sources, dest = o.operands
    if dest.dynamic or ctx.cwd is None:
        return f"{program} -f: destination '{dest.text}' not known before the command runs"
    no_deref = o.flags & {"n", "T"} or "no-dereference" in o.longs
    if not no_deref and _is_dir(dest, ctx):
        return _into_dir(f"{program} -f", dest, sources, ctx)
    if ctx.cwd and any(os.path.lexists(p) for p in _expand(dest, ctx.cwd)):
        return f"{program} -f: replaces existing '{dest.text}'"
    return _write_reason(f"{program} -f", dest, ctx)


def _tee(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    o = _options(args, "", ("output-error",))
    append = "a" in o.flags or "append" in o.longs
    for w in o.operands:
        reason = _write_reason(program, w, ctx, append=append)
        if reason:
            return reason
    return None


def _sed(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    skip = False
    for w in args:
        t = w.text
        if skip:
            skip = False
            continue
        if t == "--":
            break
        if t.startswith("--in-place"):
            return f"{program}: edits files in place (--in-place)"
        if t.startswith("-") and not t.startswith("--"):
            for j, ch in enumerate(t[1:], 1):
                if ch == "i":
                    return f"{program}: edits files in place (-i)"
                if ch in "efl":
                    skip = j == len(t) - 1
                    break
    return None


def _perl(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    inline = False
    skip = False
    for w in args:
        t = w.text
        if skip:
            skip = False
            continue
        if t == "--" or not t.startswith("-") or t == "-":
            break
        for j, ch in enumerate(t[1:], 1):
            if ch == "i":
                return f"{program}: edits files in place (-i)"
            if ch in "eE":
                inline = True
                skip = j == len(t) - 1
                break
            if ch in "IMmFdDxC0l":
                skip = ch in "IMmF" and j == len(t) - 1
                break
    if inline:
        return f"{program} -e: runs inline code"
    return _script_or_stdin(program, args, "IMm")


def _script_or_stdin(program: str, args: list[_Word], short_arg: str) -> str | None:
    o = _options(args, short_arg, stop_at_operand=True)
    if o.flags & {"v", "V", "h"}:
        return None
    if not o.operands or o.operands[0].text == "-":
        return f"{program}: runs code read from stdin"
    return None


def _python(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    i = 0
    while i < len(args):
        t = args[i].text
        if t == "--":
            return None if i + 1 < len(args) else f"{program}: runs code read from stdin"
        if t == "-":
            return f"{program}: runs code read from stdin"
        if not t.startswith("-"):
            return None  # a script file
        if not t.startswith("--"):
            for j, ch in enumerate(t[1:], 1):
                if ch == "c":
                    return f"{program} -c: runs inline code"
                if ch == "m":
                    attached = t[j + 1 :]
                    module = attached or (args[i + 1].text if i + 1 < len(args) else "")
                    rest = args[i + 1 :] if attached else args[i + 2 :]
                    if module in ("pip", "pip3"):
                        return _packages("pip", rest, ctx)
                    return None
                if ch in "VhH?":
                    return None
                if ch in "WX":
                    i += 0 if t[j + 1 :] else 1
                    break
        i += 1
    return f"{program}: runs code read from stdin"


@dataclass(frozen=True, slots=True)
class _Interp:
    inline: frozenset[str]  # option words that take inline code
    short_arg: str = ""  # short options taking an argument
    subcommand: str = ""  # a subcommand that runs inline code (deno eval)
    stdin: bool = True  # no script given: code is read from stdin


_INTERPRETERS: dict[str, _Interp] = {
    "node": _Interp(frozenset({"-e", "--eval", "-p", "--print", "-pe"}), "r"),
    "nodejs": _Interp(frozenset({"-e", "--eval", "-p", "--print", "-pe"}), "r"),
    "ruby": _Interp(frozenset({"-e"}), "rIC"),
    "php": _Interp(frozenset({"-r"}), "cdz"),
    "lua": _Interp(frozenset({"-e"}), "l"),
    "Rscript": _Interp(frozenset({"-e"})),
    "osascript": _Interp(frozenset({"-e"})),
    "bun": _Interp(frozenset({"-e", "--eval", "-p", "--print"}), stdin=False),
    "deno": _Interp(frozenset(), subcommand="eval", stdin=False),
    "pwsh": _Interp(
        frozenset({"-c", "-command", "-Command", "-encodedcommand", "-EncodedCommand"}),
        stdin=False,
    ),
    "powershell": _Interp(
        frozenset({"-c", "-command", "-Command", "-encodedcommand", "-EncodedCommand"}),
        stdin=False,
    ),
}


def _interpreter(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    spec = _INTERPRETERS[program]
    for w in args:
        if w.text in spec.inline or (program == "ruby" and re.fullmatch(r"-\w*e", w.text)):
            return f"{program} {w.text}: runs inline code"
    o = _options(args, spec.short_arg, stop_at_operand=True)
    if spec.subcommand and o.operands and o.operands[0].text == spec.subcommand:
        return f"{program} {spec.subcommand}: runs inline code"
    if spec.stdin and not (o.flags & {"v", "V", "h"}) and "version" not in o.longs:
        if not o.operands or o.operands[0].text == "-":
            return f"{program}: runs code read from stdin"
    return None


_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "rbash"})


def _shell_options(args: list[_Word]) -> _Opts:
    """A shell's options up to its first operand (the script, or the ``-c`` string)."""
    return _options(args, "oO", ("rcfile", "init-file"), stop_at_operand=True)


def _shell(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    o = _shell_options(args)
    if "c" in o.flags or "command" in o.longs:
        if not o.operands:
            return None
        return _text_reason(f"{program} -c", o.operands[:1], ctx)
    if "s" in o.flags or not o.operands or o.operands[0].text == "-":
        return f"{program}: runs commands read from stdin"
    return None


def _awk(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    texts = [w.text for w in args]
    for a, b in zip(texts, [*texts[1:], ""], strict=False):
        if a in ("-iinplace", "--include=inplace", "-i inplace") or (
            a in ("-i", "--include") and b == "inplace"
        ):
            return f"{program}: edits files in place (-i inplace)"
    o = _options(args, "Fvfil E", ("include", "load", "file", "assign", "field-separator", "exec"))
    if "f" in o.flags or "E" in o.flags or "file" in o.longs or not o.operands:
        return None
    code = o.operands[0].text
    if "system(" in code or re.search(r'\|\s*(&|")', code):
        return f"{program}: program runs shell commands"
    if re.search(r"\bprintf?\b[^;}]*[^>]>(?!>)", code):
        return f"{program}: program writes files ('>' in print)"
    return None


def _find(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    i = 0
    while i < len(args):
        t = args[i].text
        if t == "-delete":
            return f"{program}: -delete deletes files"
        if t in ("-exec", "-execdir", "-ok", "-okdir"):
            j = i + 1
            while j < len(args) and args[j].text not in (";", "+"):
                j += 1
            reason = _classify_argv(args[i + 1 : j], ctx.deeper(dynamic=True))
            if reason:
                return f"{program} {t}: {reason}"
            i = j
        elif t in ("-fprint", "-fprint0", "-fls", "-fprintf") and i + 1 < len(args):
            reason = _write_reason(program, args[i + 1], ctx, how=t)
            if reason:
                return reason
            i += 1
        i += 1
    return None


_RSYNC_SHORT = "eBfTM"
_RSYNC_LONG = (
    "rsh", "rsync-path", "exclude", "include", "filter", "exclude-from", "include-from",
    "files-from", "backup-dir", "suffix", "compare-dest", "copy-dest", "link-dest",
    "temp-dir", "partial-dir", "log-file", "log-file-format", "out-format", "chmod",
    "chown", "usermap", "groupmap", "timeout", "contimeout", "bwlimit", "max-size",
    "min-size", "max-delete", "block-size", "modify-window", "port", "password-file",
    "info", "debug", "sockopts", "protocol", "iconv", "checksum-choice",
    "compress-choice", "compress-level", "skip-compress", "remote-option", "outbuf",
)  # fmt: skip
_TREE_LIMIT = 10_000  # entries a classifier walks before it assumes the worst


def _remote(word: _Word) -> bool:
    """``host:path``, ``user@host:path``, ``host::module`` or ``rsync://…``: rsync reads a
    ':' before the first '/' as a host, quoted or not (``./a:b`` is the local file)."""
    return "://" in word.text or ":" in word.text.split("/", 1)[0]


def _rsync(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    o = _options(args, _RSYNC_SHORT, _RSYNC_LONG)
    for name in o.longs:
        if name.startswith("del"):
            return f"{program}: --{name} deletes files at the destination"
    if "remove-source-files" in o.longs:
        return f"{program}: --remove-source-files deletes the source files"
    if o.flags & {"n", "b"} or o.longs.keys() & {"dry-run", "backup", "ignore-existing"}:
        return None
    if "list-only" in o.longs or len(o.operands) < 2:
        return None
    *sources, dest = o.operands
    if _remote(dest):
        return f"{program}: writes to another host ('{dest.text}')"
    if dest.dynamic or ctx.cwd is None or ctx.dynamic or any(s.dynamic for s in sources):
        return f"{program}: destination not known before the command runs"
    (dest_path,) = _expand(dest, ctx.cwd)[:1]
    if not os.path.lexists(dest_path):
        return None
    if not os.path.isdir(dest_path):
        return _write_reason(program, dest, ctx)
    for src in sources:
        if _remote(src):
            if os.listdir(dest_path):
                return f"{program}: may overwrite files in '{dest.text}' (remote source)"
            continue
        for path in _expand(src, ctx.cwd):
            into = (
                dest_path
                if src.text.endswith("/")
                else os.path.join(dest_path, os.path.basename(path.rstrip("/")))
            )
            hit = _overwritten(path, into)
            if hit:
                return f"{program}: overwrites existing file '{_shown_under(dest, dest_path, hit)}'"
    return None


def _overwritten(source: str, target: str) -> str | None:
    """The first existing non-directory under ``target`` that copying the tree ``source``
    onto ``target`` would replace ('…' when the trees are too large to compare)."""
    if not os.path.isdir(source):
        return target if os.path.lexists(target) and not os.path.isdir(target) else None
    if not os.path.isdir(target):
        return target if os.path.lexists(target) else None
    seen = 0
    for root, dirs, files in os.walk(source):
        rel = os.path.relpath(root, source)
        for name in (*files, *dirs):
            seen += 1
            if seen > _TREE_LIMIT:
                return target
            there = os.path.normpath(os.path.join(target, rel, name))
            if os.path.lexists(there) and not os.path.isdir(there):
                return there
    return None


def _shown_under(dest: _Word, dest_path: str, hit: str) -> str:
    rel = os.path.relpath(hit, dest_path)
    return dest.text if rel == "." else os.path.join(dest.text, rel)


def _patch(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    o = _options(args, "pidoDrBFgVYzi", ("directory", "input", "output", "reject-file"))
    if "dry-run" in o.longs or "b" in o.flags or "backup" in o.longs:
        return None
    return f"{program}: edits files in place"


def _sort(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    o = _options(
        args,
        "okStT",
        ("output", "key", "field-separator", "buffer-size", "temporary-directory", "parallel"),
    )
    out = o.values.get("o") or _long_word(o, "output")
    return _write_reason(program, out, ctx, how="-o") if out is not None else None


_TAR_MAX_LIST = 256 * 1024 * 1024  # bytes of archive read to list its members


def _tar(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    if args and not args[0].text.startswith("-") and not args[0].dynamic:
        args = [replace(args[0], text="-" + args[0].text), *args[1:]]
    o = _options(args, "fCbHKLNTVXg", ("file", "directory", "exclude", "files-from", "format"))
    if "remove-files" in o.longs:
        return f"{program}: --remove-files deletes the archived files"
    if "delete" in o.longs:
        return f"{program}: --delete removes members from the archive"
    archive = o.values.get("f") or _long_word(o, "file")
    if archive is not None and ("c" in o.flags or "create" in o.longs):
        return _write_reason(program, archive, ctx, how="-f")
    if "x" in o.flags or o.longs.keys() & {"extract", "get"}:
        return _tar_extract(program, o, archive, ctx)
    return None


def _tar_extract(program: str, o: _Opts, archive: _Word | None, ctx: _Ctx) -> str | None:
    """Extraction replaces existing files of the same names, unless told to keep them."""
    keep = {"keep-old-files", "skip-old-files", "to-stdout", "to-command"}
    if o.flags & {"k", "O"} or o.longs.keys() & keep:
        return None
    into = o.values.get("C") or _long_word(o, "directory") or _Word(".")
    if into.dynamic or ctx.cwd is None or (archive is not None and archive.dynamic):
        return f"{program}: -x target not known before the command runs"
    (dest,) = _expand(into, ctx.cwd)[:1]
    if not os.path.isdir(dest) or not os.listdir(dest):
        return None  # nothing there to overwrite (tar fails on a missing -C directory)
    names = _tar_members(archive, ctx.cwd)
    if names is None:
        return f"{program}: -x may overwrite files in '{into.text}' (archive not readable)"
    wanted = [w.text.rstrip("/") for w in o.operands if not w.dynamic]
    for name in names:
        name = name.lstrip("/")
        if wanted and not any(name == w or name.startswith(w + "/") for w in wanted):
            continue
        there = os.path.normpath(os.path.join(dest, name))
        if os.path.lexists(there) and not os.path.isdir(there):
            shown = name if into.text == "." else os.path.join(into.text, name)
            return f"{program}: -x overwrites existing file '{shown}'"
    return None


def _tar_members(archive: _Word | None, cwd: str) -> list[str] | None:
    """The member names of a local archive; None when it cannot be read here."""
    import tarfile

    if archive is None or archive.text == "-":
        return None  # stdin (or $TAPE)
    (path,) = _expand(archive, cwd)[:1]
    try:
        if os.path.getsize(path) > _TAR_MAX_LIST:
            return None
        with tarfile.open(path) as tar:
            return tar.getnames()
    except (OSError, tarfile.TarError, EOFError):
        return None


def _unzip(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    o = _options(args, "dxP")
    return f"{program}: -o overwrites files without asking" if "o" in o.flags else None


def _chmod(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    o = _options(args, "", ("reference", "from"))
    if "R" not in o.flags and "recursive" not in o.longs:
        return None
    home = os.path.expanduser("~").rstrip("/")
    cwd = ctx.cwd or "/"
    for w in o.operands:
        if w.dynamic:
            continue
        for path in _expand(w, cwd):
            top = os.path.dirname(path) == "/" and not _inside(path, cwd)
            if path == "/" or path == home or top:
                return f"{program} -R: changes every file under '{path}'"
    return None


def _kill(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    texts = [w.text for w in args]
    if not texts or set(texts) & {"-l", "-L", "--list", "--table"}:
        return None
    if "-0" in texts or texts[:2] in (["-s", "0"], ["-n", "0"]):
        return None
    return f"{program}: terminates processes"


def _init(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    if any(w.text in ("0", "6", "1", "S", "s") for w in args):
        return f"{program}: shuts down or reboots the machine"
    return None


_SYSTEMCTL_VERBS = frozenset(
    {
        "stop",
        "disable",
        "mask",
        "kill",
        "poweroff",
        "reboot",
        "halt",
        "kexec",
        "isolate",
        "rescue",
        "emergency",
        "enable",
        "set-default",
        "edit",
        "revert",
    }
)


def _systemctl(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    o = _options(args, "HMptsno", ("host", "machine", "type", "state", "signal"))
    for w in o.operands:
        if w.text in _SYSTEMCTL_VERBS:
            return f"{program} {w.text}: changes system services"
        return None
    return None


def _service(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    if len(args) >= 2 and args[1].text == "stop":
        return f"{program}: stops a system service"
    return None


def _crontab(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    o = _options(args, "u")
    if "r" in o.flags:
        return f"{program} -r: removes the crontab"
    if o.operands:
        return f"{program}: replaces the crontab"
    return None


def _curl(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    o = _options(
        args,
        "XdFTHoeAbcEKmrUuwxyYzCDQtP",
        ("request", "output", "header", "user", "data", "form", "upload-file", "json"),
    )
    method = o.values.get("X") or _long_word(o, "request")
    if method is not None and method.text.upper() in ("POST", "PUT", "DELETE", "PATCH"):
        return f"{program}: sends a {method.text.upper()} request"
    sends = o.flags & {"d", "F", "T"} or any(
        k.startswith(("data", "form", "upload-file", "json")) for k in o.longs
    )
    if sends and "G" not in o.flags and "get" not in o.longs:
        return f"{program}: sends data to a server"
    out = o.values.get("o") or _long_word(o, "output")
    return _write_reason(program, out, ctx, how="-o") if out is not None else None


def _wget(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    o = _options(args, "OoaPeUtTwQlAR", ("method", "output-document", "output-file"))
    if any(k in o.longs for k in ("post-data", "post-file", "body-data", "body-file")):
        return f"{program}: sends data to a server"
    method = o.longs.get("method")
    if method and method.upper() in ("POST", "PUT", "DELETE", "PATCH"):
        return f"{program}: sends a {method.upper()} request"
    out = o.values.get("O") or _long_word(o, "output-document")
    return _write_reason(program, out, ctx, how="-O") if out is not None else None


def _httpie(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    o = _options(args, "abv", ("auth", "session", "output"), stop_at_operand=True)
    if not o.operands:
        return None
    first = o.operands[0].text
    if first.upper() in ("POST", "PUT", "DELETE", "PATCH") and first.isupper():
        return f"{program}: sends a {first} request"
    if any(re.search(r"^[^:=@]+(=|:=|@)", w.text) for w in o.operands[1:]):
        return f"{program}: sends data to a server"
    return None


_REMOVE_VERBS: dict[str, frozenset[str]] = {
    "apt": frozenset({"remove", "purge", "autoremove", "autopurge"}),
    "apt-get": frozenset({"remove", "purge", "autoremove", "autopurge"}),
    "aptitude": frozenset({"remove", "purge"}),
    "yum": frozenset({"remove", "erase", "autoremove"}),
    "dnf": frozenset({"remove", "erase", "autoremove"}),
    "microdnf": frozenset({"remove"}),
    "zypper": frozenset({"remove", "rm"}),
    "apk": frozenset({"del"}),
    "brew": frozenset({"uninstall", "remove", "rm"}),
    "snap": frozenset({"remove"}),
    "flatpak": frozenset({"uninstall", "remove"}),
    "npm": frozenset({"uninstall", "remove", "rm", "un", "r", "unlink", "prune"}),
    "pnpm": frozenset({"remove", "rm", "uninstall", "un", "prune"}),
    "yarn": frozenset({"remove"}),
    "pip": frozenset({"uninstall"}),
    "pipx": frozenset({"uninstall", "uninstall-all"}),
    "poetry": frozenset({"remove"}),
    "pdm": frozenset({"remove"}),
    "uv": frozenset({"remove"}),
    "conda": frozenset({"remove", "uninstall"}),
    "mamba": frozenset({"remove", "uninstall"}),
    "micromamba": frozenset({"remove", "uninstall"}),
    "gem": frozenset({"uninstall"}),
    "cargo": frozenset({"uninstall"}),
}


def _packages(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    o = _options(args, "oct", ("python", "prefix", "target", "root"))
    words = [w.text for w in o.operands]
    if program in ("uv", "conda", "mamba", "micromamba") and words[:1] in (["pip"], ["env"]):
        words = words[1:]
        if program == "uv" and words[:1] == ["uninstall"]:
            return f"{program} pip uninstall: removes packages"
    if words and words[0] in _REMOVE_VERBS[program]:
        return f"{program} {words[0]}: removes packages"
    return None


def _dpkg(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    o = _options(args, "")
    if o.flags & {"r", "P"} or {"remove", "purge"} & o.longs.keys():
        return f"{program}: removes packages"
    return None


def _pacman(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    if any(w.text.startswith("-R") or w.text == "--remove" for w in args):
        return f"{program} -R: removes packages"
    return None


def _containers(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    o = _options(args, "Hcl", ("host", "context", "config", "log-level"), stop_at_operand=True)
    words = [w.text for w in o.operands]
    if words[:1] and words[0] in ("rm", "rmi", "kill", "prune"):
        return f"{program} {words[0]}: deletes containers, images or volumes"
    if len(words) > 1 and words[1] in ("rm", "prune", "kill", "remove"):
        return f"{program} {words[0]} {words[1]}: deletes containers, images or volumes"
    if words[:2] == ["compose", "down"] and ("-v" in words or "--volumes" in words):
        return f"{program} compose down -v: deletes volumes"
    return None


def _kubectl(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    verbs = {w.text for w in args}
    for verb in ("delete", "drain"):
        if verb in verbs:
            return f"{program} {verb}: deletes cluster resources"
    return None


def _terraform(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    texts = [w.text for w in args]
    if "destroy" in texts or ("apply" in texts and "-destroy" in texts):
        return f"{program} destroy: destroys infrastructure"
    return None


def _iptables(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    o = _options(args, "tjmiosdpg")
    changes = {"append", "delete", "insert", "replace", "flush", "zero", "delete-chain", "policy"}
    if o.flags & set("ADIRFZXPNE") or changes & o.longs.keys():
        return f"{program}: changes firewall rules"
    return None


def _sysctl(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    o = _options(args, "")
    if o.flags & {"w", "p"} or "write" in o.longs or any("=" in w.text for w in o.operands):
        return f"{program}: changes kernel settings"
    return None


def _alternatives(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    changes = {"install", "remove", "remove-all", "set", "config", "auto", "all"}
    if changes & {w.text.lstrip("-") for w in args if w.text.startswith("--")}:
        return f"{program}: changes system configuration"
    return None


# --------------------------------------------------------------------------- git
def _git(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    o = _options(
        args, "Cc", ("git-dir", "work-tree", "namespace", "config-env"), stop_at_operand=True
    )
    if not o.operands:
        return None
    where = o.values.get("C")
    if where is not None:
        if where.dynamic or ctx.cwd is None:
            ctx = replace(ctx, cwd=None)
        else:
            ctx = replace(ctx, cwd=_expand(where, ctx.cwd)[0])
    sub = o.operands[0].text
    handler = _GIT.get(sub)
    reason = handler(o.operands[1:], ctx) if handler else None
    return f"{program} {sub}: {reason}" if reason else None


def _git_clean(args: list[_Word], ctx: _Ctx) -> str | None:
    o = _options(args, "e", ("exclude",))
    if ("f" in o.flags or "force" in o.longs) and not ("n" in o.flags or "dry-run" in o.longs):
        return "deletes untracked files"
    return None


def _git_reset(args: list[_Word], ctx: _Ctx) -> str | None:
    texts = {w.text for w in args}
    if texts & {"--hard", "--merge"}:
        return "discards uncommitted changes (--hard)"
    return None


def _git_checkout(args: list[_Word], ctx: _Ctx) -> str | None:
    o = _options(args, "bBU", ("orphan", "conflict", "pathspec-from-file"))
    if "f" in o.flags or "force" in o.longs:
        return "discards uncommitted changes (-f)"
    if "pathspec-from-file" in o.longs:
        return "discards uncommitted changes to the listed paths"
    texts = [w.text for w in args]
    if "--" in texts and texts.index("--") < len(texts) - 1:
        return "discards uncommitted changes to the given paths"
    for w in o.operands:
        if w.text == "." or w.dynamic or ctx.cwd is None:
            return f"discards uncommitted changes to '{w.text}'"
        if any(os.path.lexists(p) for p in _expand(w, ctx.cwd)):
            return f"discards uncommitted changes to '{w.text}'"
    return None


def _git_restore(args: list[_Word], ctx: _Ctx) -> str | None:
    o = _options(args, "s", ("source", "pathspec-from-file"))
    staged = "S" in o.flags or "staged" in o.longs
    worktree = "W" in o.flags or "worktree" in o.longs
    return None if staged and not worktree else "discards uncommitted changes"


def _git_switch(args: list[_Word], ctx: _Ctx) -> str | None:
    o = _options(args, "cC", ("create", "force-create", "orphan"))
    if "f" in o.flags or {"force", "discard-changes"} & o.longs.keys():
        return "discards uncommitted changes (--discard-changes)"
    return None


def _git_push(args: list[_Word], ctx: _Ctx) -> str | None:
    o = _options(args, "o", ("push-option", "repo", "receive-pack", "exec"))
    forced = {"force", "mirror", "delete", "prune"} & o.longs.keys()
    if o.flags & {"f", "d"} or forced or any(k.startswith("force-with-lease") for k in o.longs):
        return "rewrites or deletes remote history"
    if any(w.text.startswith("+") or re.match(r"^:.", w.text) for w in o.operands[1:]):
        return "rewrites or deletes remote history"
    return None


def _git_branch(args: list[_Word], ctx: _Ctx) -> str | None:
    o = _options(args, "u", ("set-upstream-to",))
    deleting = "d" in o.flags or "delete" in o.longs
    forced = "f" in o.flags or "force" in o.longs
    if "D" in o.flags or "M" in o.flags or "C" in o.flags or (deleting and forced):
        return "deletes or overwrites a branch"
    return None


def _git_stash(args: list[_Word], ctx: _Ctx) -> str | None:
    if args and args[0].text in ("drop", "clear"):
        return f"{args[0].text} deletes stashed changes"
    return None


def _git_rm(args: list[_Word], ctx: _Ctx) -> str | None:
    o = _options(args, "", ("pathspec-from-file",))
    if "cached" in o.longs:
        return None
    if "f" in o.flags or "force" in o.longs:
        return "deletes files with uncommitted changes (-f)"
    return None


def _git_history(args: list[_Word], ctx: _Ctx) -> str | None:
    return "rewrites history"


def _git_reflog(args: list[_Word], ctx: _Ctx) -> str | None:
    if args and args[0].text in ("expire", "delete"):
        return "drops recovery points"
    return None


def _git_gc(args: list[_Word], ctx: _Ctx) -> str | None:
    o = _options(args)
    if o.longs.get("prune") in ("now", "all"):
        return "drops unreachable objects now"
    return None


def _git_update_ref(args: list[_Word], ctx: _Ctx) -> str | None:
    return "deletes a ref" if any(w.text == "-d" for w in args) else None


def _git_config(args: list[_Word], ctx: _Ctx) -> str | None:
    o = _options(args, "f", ("file", "type", "default", "comment", "value"))
    if not ({"global", "system"} & o.longs.keys()):
        return None
    mutating = {
        "unset",
        "unset-all",
        "replace-all",
        "add",
        "remove-section",
        "rename-section",
        "edit",
    }
    words = [w.text for w in o.operands]
    if mutating & o.longs.keys() or "e" in o.flags or len(words) >= 2:
        return "changes git configuration"
    if words[:1] and words[0] in ("set", "unset", "remove-section", "rename-section", "edit"):
        return "changes git configuration"
    return None


def _git_apply(args: list[_Word], ctx: _Ctx) -> str | None:
    o = _options(args, "pC", ("directory", "exclude", "include", "whitespace"))
    if o.longs.keys() & {"check", "stat", "numstat", "summary", "cached"}:
        return None  # only reports, or touches the index alone
    return "edits files in place"


def _git_tag(args: list[_Word], ctx: _Ctx) -> str | None:
    o = _options(args, "mFu", ("message", "file", "local-user", "cleanup"))
    if "d" in o.flags or "delete" in o.longs:
        return "deletes tags"
    if "f" in o.flags or "force" in o.longs:
        return "moves an existing tag (-f)"
    return None


_GIT: dict[str, Callable[[list[_Word], _Ctx], str | None]] = {
    "apply": _git_apply,
    "tag": _git_tag,
    "clean": _git_clean,
    "reset": _git_reset,
    "checkout": _git_checkout,
    "restore": _git_restore,
    "switch": _git_switch,
    "push": _git_push,
    "branch": _git_branch,
    "stash": _git_stash,
    "rm": _git_rm,
    "filter-branch": _git_history,
    "filter-repo": _git_history,
    "reflog": _git_reflog,
    "gc": _git_gc,
    "update-ref": _git_update_ref,
    "config": _git_config,
}


def _scp(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    o = _options(args, "cFiJloPSXD")
    if len(o.operands) < 2:
        return None
    *sources, dest = o.operands
    if _remote(dest):
        return f"{program}: copies to another host ('{dest.text}')"
    if dest.dynamic or ctx.cwd is None:
        return f"{program}: destination '{dest.text}' not known before the command runs"
    if _is_dir(dest, ctx):
        if any(_remote(src) or src.dynamic for src in sources):
            if os.listdir(_expand(dest, ctx.cwd)[0]):
                return f"{program}: may overwrite files in '{dest.text}' (remote source)"
            return None
        return _into_dir(program, dest, sources, ctx)
    return _write_reason(program, dest, ctx)


_SQL_CHANGES = re.compile(
    r"\b(drop|delete|truncate|update|alter|replace|grant|revoke)\b",
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


def _output_option(option: str) -> _Handler:
    """A program that writes the file named after ``option`` (``-out f``, ``-o f``)."""

    def handler(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
        for word, value in pairwise(args):
            if word.text == option:
                return _write_reason(program, value, ctx, how=option)
        return None

    return handler


def _ffmpeg(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    # without -y ffmpeg asks before overwriting, and declines when nobody answers
    if not any(w.text == "-y" for w in args) or not args:
        return None
    return _write_reason(program, args[-1], ctx, how="-y")


def _convert(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    operands = [w for w in args if not w.text.startswith(("-", "+"))]
    if program == "magick" and operands[:1] and operands[0].text in ("mogrify",):
        return f"{program}: mogrify rewrites images in place"
    return _write_reason(program, operands[-1], ctx) if len(operands) >= 2 else None


def _cloud(verbs: frozenset[str], what: str) -> _Handler:
    """A CLI whose subcommand words name the action (``gh repo delete``, ``aws s3 rm``)."""

    def handler(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
        for w in args:
            t = w.text.lower()
            if t == "--delete":
                return f"{program}: --delete deletes at the destination"
            if t in verbs or t.startswith(("delete-", "terminate-", "remove-", "deregister-")):
                return f"{program} {w.text}: {what}"
        return None

    return handler


_CLOUD_VERBS = frozenset({"delete", "rm", "rb", "destroy", "remove", "purge", "terminate"})


# --------------------------------------------------------------------------- table
_HANDLERS: dict[str, _Handler] = {
    "scp": _scp,
    "sqlite3": _sqlite,
    "psql": _psql,
    "mysql": _mysql,
    "mariadb": _mysql,
    "openssl": _output_option("-out"),
    "ffmpeg": _ffmpeg,
    "convert": _convert,
    "magick": _convert,
    "mogrify": _always("rewrites images in place"),
    "gh": _cloud(_CLOUD_VERBS, "deletes on GitHub"),
    "aws": _cloud(_CLOUD_VERBS, "deletes cloud resources"),
    "gcloud": _cloud(_CLOUD_VERBS, "deletes cloud resources"),
    "az": _cloud(_CLOUD_VERBS, "deletes cloud resources"),
    "rm": _always("deletes files"),
    "rmdir": _always("deletes directories"),
    "unlink": _always("deletes a file"),
    "shred": _always("destroys file contents"),
    "srm": _always("destroys file contents"),
    "wipe": _always("destroys file contents"),
    "truncate": _always("truncates files"),
    "mkfs": _always("formats a file system"),
    "mke2fs": _always("formats a file system"),
    "mkswap": _always("formats a swap area"),
    "fdisk": _always("rewrites a partition table"),
    "sfdisk": _always("rewrites a partition table"),
    "cfdisk": _always("rewrites a partition table"),
    "gdisk": _always("rewrites a partition table"),
    "sgdisk": _always("rewrites a partition table"),
    "parted": _always("rewrites a partition table"),
    "wipefs": _always("erases file-system signatures"),
    "blkdiscard": _always("discards a whole device"),
    "dd": _dd,
    "mv": _copy,
    "cp": _copy,
    "install": _copy,
    "ln": _ln,
    "tee": _tee,
    "sed": _sed,
    "gsed": _sed,
    "perl": _perl,
    "python": _python,
    "awk": _awk,
    "gawk": _awk,
    "mawk": _awk,
    "nawk": _awk,
    "find": _find,
    "rsync": _rsync,
    "sort": _sort,
    "tar": _tar,
    "patch": _patch,
    "unzip": _unzip,
    "chmod": _chmod,
    "chown": _chmod,
    "chgrp": _chmod,
    "kill": _kill,
    "killall": _always("terminates processes"),
    "killall5": _always("terminates processes"),
    "pkill": _always("terminates processes"),
    "skill": _always("terminates processes"),
    "xkill": _always("terminates processes"),
    "shutdown": _always("shuts down or reboots the machine"),
    "reboot": _always("shuts down or reboots the machine"),
    "halt": _always("shuts down or reboots the machine"),
    "poweroff": _always("shuts down or reboots the machine"),
    "init": _init,
    "telinit": _init,
    "systemctl": _systemctl,
    "service": _service,
    "crontab": _crontab,
    "mail": _always("sends mail"),
    "mailx": _always("sends mail"),
    "sendmail": _always("sends mail"),
    "mutt": _always("sends mail"),
    "neomutt": _always("sends mail"),
    "msmtp": _always("sends mail"),
    "ssmtp": _always("sends mail"),
    "swaks": _always("sends mail"),
    "curl": _curl,
    "wget": _wget,
    "http": _httpie,
    "https": _httpie,
    "xh": _httpie,
    "dpkg": _dpkg,
    "pacman": _pacman,
    "docker": _containers,
    "podman": _containers,
    "nerdctl": _containers,
    "kubectl": _kubectl,
    "terraform": _terraform,
    "tofu": _terraform,
    "iptables": _iptables,
    "ip6tables": _iptables,
    "sysctl": _sysctl,
    "update-alternatives": _alternatives,
    "useradd": _always("changes system accounts"),
    "userdel": _always("changes system accounts"),
    "usermod": _always("changes system accounts"),
    "groupadd": _always("changes system accounts"),
    "groupdel": _always("changes system accounts"),
    "groupmod": _always("changes system accounts"),
    "passwd": _always("changes system accounts"),
    "chpasswd": _always("changes system accounts"),
    "chsh": _always("changes system accounts"),
    "chfn": _always("changes system accounts"),
    "visudo": _always("changes system configuration"),
    "vipw": _always("changes system accounts"),
    "git": _git,
}
_HANDLERS.update(dict.fromkeys(_REMOVE_VERBS, _packages))
_HANDLERS.update(dict.fromkeys(_INTERPRETERS, _interpreter))
_HANDLERS.update(dict.fromkeys(_SHELLS, _shell))


def _handler(program: str) -> _Handler | None:
    return _HANDLERS.get(program)
