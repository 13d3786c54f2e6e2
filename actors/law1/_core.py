"""Law 1 reading: the context, keywords, wrappers, option parsing and path rules shared by
every program handler, and the walk over a parsed command."""

from __future__ import annotations

import glob as _glob
import itertools
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from ._lexer import _Redirect, _Simple, _Word

# =========================================================================== context
_MAX_DEPTH = 8


_READ_BUDGET = 1024 * 1024  # bytes of script files one classification may read


@dataclass(slots=True)
class _Budget:
    """What one classification may still read (shared by every context it derives), so
    scripts that source each other cannot multiply the work."""

    left: int = _READ_BUDGET


@dataclass(frozen=True, slots=True)
class _Ctx:
    cwd: str | None  # None: the file system the command sees is unknown (remote host)
    dynamic: bool = False  # arguments are appended at run time (xargs, find -exec)
    depth: int = 0
    root: str | None = None  # the workspace: writes beneath it are never "configuration"
    linked: frozenset[str] = frozenset()  # paths an earlier command links or moves data to
    earlier: bool = False  # an earlier command of the same line runs first
    budget: _Budget = field(default_factory=_Budget, compare=False)

    def deeper(self, **changes: object) -> _Ctx:
        return replace(self, depth=self.depth + 1, **changes)  # type: ignore[arg-type]


class _Walk:
    """What the core's recursion calls back into: the line walk (``_line``) and the handler
    table (``_table``). Both import this module, so it cannot import them: the package sets
    them when it is imported (``_classify``), before any command is classified."""

    line: Callable[[str, _Ctx], str | None] | None = None
    handler: Callable[[str], _Handler | None] | None = None


_WALK = _Walk()


def _classify_text(command: str, ctx: _Ctx) -> str | None:
    assert _WALK.line is not None, "artoo.actors.law1 wires the line walk when imported"
    return _WALK.line(command, ctx)


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
        if words[0].glob:
            return _glob_program(words, ctx)
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
    assert _WALK.handler is not None, "artoo.actors.law1 wires the handler table when imported"
    handler = _WALK.handler(program)
    return handler(program, args, ctx) if handler else None


def _glob_program(words: list[_Word], ctx: _Ctx) -> str | None:
    """A program named by a glob (``/bin/r? f``) is each program the glob can match."""
    if ctx.cwd is None:
        return f"{words[0].text}: program not known before the command runs"
    matches = _expand(words[0], ctx.cwd)
    literal = os.path.normpath(os.path.join(ctx.cwd, words[0].text))
    if matches == [literal]:  # matches nothing: the shell runs the word as written
        return _classify_argv([replace(words[0], glob=False), *words[1:]], ctx)
    for match in matches:
        reason = _classify_argv([_Word(match), *words[1:]], ctx.deeper())
        if reason:
            return f"{words[0].text} (matches {match}): {reason}"
    return None


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


_GLOB_LEVELS = 3  # wildcard path components a glob may have and still be expanded
_GLOB_MATCHES = 10_000  # paths one glob may name and still be checked one by one
_GLOB_CHARS = frozenset("*?[")


class GlobTooWide(Exception):
    """A glob names more paths than Law 1 checks: it is assumed to touch existing files."""


def _expand(word: _Word, cwd: str) -> list[str]:
    """The absolute paths a (static) word names: tilde and unquoted globs expanded.

    Bounded: a glob with more than ``_GLOB_LEVELS`` wildcard components, or naming more
    than ``_GLOB_MATCHES`` paths, raises :class:`GlobTooWide` (fail closed: the command
    is irreversible), so ``cp f /*/*/*/*/*/*`` costs a refusal, not a walk of the disk.
    """
    text = os.path.expanduser(word.text) if word.tilde else word.text
    if word.glob:
        levels = sum(1 for part in text.split("/") if _GLOB_CHARS & set(part))
        if levels > _GLOB_LEVELS or "**" in text:
            raise GlobTooWide(text)
        found = _glob.iglob(text, root_dir=None if os.path.isabs(text) else cwd)
        matches = list(itertools.islice(found, _GLOB_MATCHES + 1))
        if len(matches) > _GLOB_MATCHES:
            raise GlobTooWide(text)
        if matches:
            return [os.path.normpath(os.path.join(cwd, m)) for m in sorted(matches)]
    return [os.path.normpath(os.path.join(cwd, text))]


def _exempt(path: str) -> bool:
    return path in _DEVICES or path.startswith(("/dev/fd/", "/proc/self/fd/", "/dev/pts/"))


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _is_config(path: str, root: str) -> bool:
    if _inside(path, root):
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
        if _is_config(path, ctx.root or ctx.cwd):
            return f"{program}: {label}writes '{word.text}', modifying system configuration"
        if append or os.path.isdir(path):
            continue
        if os.path.lexists(path):
            return f"{program}: {label}overwrites existing file '{word.text}'"
        if path in ctx.linked or "*" in ctx.linked:
            return (
                f"{program}: {label}overwrites '{word.text}', which an earlier command"
                " links or moves existing data to"
            )
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
