"""Law 1 handlers: commands that run code kept elsewhere — script files, ``source``,
Makefile recipes, package.json scripts, and package runners (``npx``) that cannot be read.

A script file is read when it can be: a shell script (and ``source``d file) is classified
line by line like a command; a Python, Perl, Ruby, JavaScript, PHP or Lua script is scanned
for calls that delete, move, truncate or write files, run other programs or change a
database (:data:`_SCAN`). A script that cannot be read (too large, not text, a
substitution such as ``<(…)``; past 256 KiB, or past 1 MiB of scripts read for one
command) runs unknown code: irreversible. A script that does not
exist cannot run, unless an earlier command of the same line creates it: a missing script
after another command counts as unknown code.
"""

from __future__ import annotations

import json
import os
import re

from ._core import _classify_text, _Ctx, _expand, _long_word, _options
from ._lexer import ShellSyntaxError, _Word
from ._system import _packages

_SCRIPT_MAX = 256 * 1024  # bytes of a script read; a larger one is unknown code

_PY = (
    r"\b(os|shutil|pathlib|subprocess)\.(remove|unlink|rmdir|removedirs|rmtree|rename|replace"
    r"|truncate|system|popen|exec\w*|spawn\w*|kill|chmod|chown|move|copy\w*|run|call"
    r"|check_\w+|Popen)\b"
    r"|(?<![\w.])(remove|unlink|rmtree|rmdir|removedirs|truncate|system|popen)\s*\("
    r"|\.(unlink|rmdir|rmtree|write_text|write_bytes|truncate|chmod|to_csv|to_json"
    r"|to_parquet|to_excel|to_pickle|savefig)\s*\("
    r"|\bopen\s*\([^()]*['\"][rabt]*[w+][rwabtx+]*['\"]|\.open\s*\(\s*['\"][rabt]*[w+]"
    r"|\bimport\s+(subprocess|ctypes)|\b(exec|eval|compile|__import__|getattr)\s*\("
    r"|\brequests\.(delete|post|put|patch)\b"
)
_PERL = (
    r"\b(unlink|rmdir|rmtree|remove_tree|rename|truncate|system|exec|qx|chmod|chown|move"
    r"|copy|eval)\b|`|\bopen\s*\(?[^;]*['\"]?\+?[>|]"
)
_RUBY = (
    r"\b(File\.(delete|unlink|write|rename|truncate|open)|FileUtils|Dir\.(delete|rmdir|unlink)"
    r"|system|exec|spawn|eval|IO\.popen|Open3)\b|`|%x"
)
_JS = (
    r"\b(unlink|unlinkSync|rm|rmSync|rmdir|rmdirSync|rename|renameSync|writeFile"
    r"|writeFileSync|truncate|truncateSync|createWriteStream|copyFile|copyFileSync|exec"
    r"|execSync|spawn|spawnSync|execFile|fork|eval|Function)\s*\(|child_process|Deno\.(remove"
    r"|writeTextFile|writeFile|rename|truncate|run|Command)|Bun\.(write|spawn|\$)"
)
_PHP = r"\b(unlink|rmdir|rename|file_put_contents|fopen|exec|shell_exec|system|passthru|eval)\b|`"
_LUA = r"\bos\.(remove|rename|execute)\b|\bio\.(open|popen)\b|\bload(string)?\b"
_SQL = r"\b(DROP|DELETE\s+FROM|TRUNCATE|UPDATE\s+\w+\s+SET|ALTER\s+TABLE)\b"

_SCAN: dict[str, re.Pattern[str]] = {
    lang: re.compile(f"(?:{pattern})|{_SQL}")
    for lang, pattern in {
        "python": _PY,
        "perl": _PERL,
        "ruby": _RUBY,
        "node": _JS,
        "php": _PHP,
        "lua": _LUA,
    }.items()
}
"""Per language, the text whose presence makes a script irreversible."""


def _read(path: str, ctx: _Ctx) -> str | None:
    """A script's text; None when it is not a readable, small text file, or when this
    classification has already read its budget of script text."""
    try:
        size = os.path.getsize(path)
        if not os.path.isfile(path) or size > min(_SCRIPT_MAX, ctx.budget.left):
            return None
        ctx.budget.left -= max(size, 1)
        with open(path, "rb") as f:
            data = f.read(_SCRIPT_MAX + 1)
    except OSError:
        return None
    if b"\0" in data:
        return None
    return data.decode("utf-8", errors="replace")


def _locate(program: str, word: _Word, ctx: _Ctx) -> tuple[str | None, str | None]:
    """(path, None) for a script that exists; (None, reason) when running it is unknown
    code; (None, None) when it does not exist and nothing on the line can create it."""
    if word.dynamic or ctx.cwd is None or ctx.dynamic:
        return None, f"{program}: runs a script not known before the command runs"
    path = _expand(word, ctx.cwd)[0]
    if path in ctx.linked or "*" in ctx.linked:
        return None, f"{program}: runs '{word.text}', which an earlier command makes"
    if not os.path.lexists(path):
        if ctx.earlier:
            return None, f"{program}: runs '{word.text}', which an earlier command may create"
        return None, None
    return path, None


def _script_reason(program: str, word: _Word, ctx: _Ctx, lang: str) -> str | None:
    """Why running the script file ``word`` with a ``lang`` interpreter is irreversible."""
    path, reason = _locate(program, word, ctx)
    if path is None:
        return reason
    text = _read(path, ctx)
    if text is None:
        return f"{program}: runs '{word.text}', a script that cannot be read"
    if lang == "sh":
        return _shell_text(f"{program} {word.text}", text, ctx)
    pattern = _SCAN.get(lang)
    match = pattern.search(text) if pattern is not None else None
    if pattern is None or match is not None:
        found = f" ({match.group(0).strip()[:40]!r})" if match is not None else ""
        return f"{program}: script '{word.text}' may change files or run programs{found}"
    return None


def _shell_text(label: str, text: str, ctx: _Ctx) -> str | None:
    try:
        reason = _classify_text(text, ctx.deeper(earlier=True))
    except ShellSyntaxError as exc:
        return f"{label}: cannot parse: {exc}"
    return f"{label}: {reason}" if reason else None


def _source(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    """``source FILE`` / ``. FILE`` runs FILE's commands in this shell."""
    if not args:
        return None
    return _script_reason(program, args[0], ctx, "sh")


# =========================================================================== make
_MAKE_DEFAULTS = {"RM": "rm -f", "MAKE": "make", "CC": "cc", "CXX": "g++", "AR": "ar"}
_MAKE_VAR = re.compile(r"\$[({]([A-Za-z_][A-Za-z0-9_.]*)[)}]")
_MAKE_RULE = re.compile(r"^([^\t#=:][^=:]*?)\s*::?(?![=])(.*)$")
_MAKE_ASSIGN = re.compile(
    r"^(?:export\s+|override\s+)?([A-Za-z_][A-Za-z0-9_.]*)\s*[:+?!]?=\s*(.*)$"
)
_MAKE_DRY = frozenset({"dry-run", "just-print", "recon", "question"})


def _make(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    """make runs the recipes of the targets asked for (the first target by default) and of
    everything they depend on: those recipe lines are classified as commands, with the
    Makefile's own variables substituted. ``-n``/``-q`` only print or ask."""
    o = _options(args, "CfIjlowW", ("directory", "file", "makefile", "include-dir", "jobs", "eval"))
    if o.flags & {"n", "q"} or o.longs.keys() & _MAKE_DRY:
        return None
    if "eval" in o.longs:
        return f"{program} --eval: runs make code given on the command line"
    where = o.values.get("C") or _long_word(o, "directory")
    if where is not None:
        if where.dynamic or ctx.cwd is None:
            return f"{program}: runs recipes in a directory not known before the command runs"
        ctx = ctx.deeper(cwd=_expand(where, ctx.cwd)[0])
    given = o.values.get("f") or _long_word(o, "file") or _long_word(o, "makefile")
    if given is None:
        if ctx.cwd is None:
            return f"{program}: runs recipes not known before the command runs"
        names = ("GNUmakefile", "makefile", "Makefile")
        found = [n for n in names if os.path.lexists(os.path.join(ctx.cwd, n))]
        given = _Word(found[0] if found else "Makefile")
    path, reason = _locate(program, given, ctx)
    if path is None:
        return reason
    text = _read(path, ctx)
    if text is None:
        return f"{program}: runs '{given.text}', a Makefile that cannot be read"
    if any(w.dynamic for w in o.operands):
        return f"{program}: runs targets not known before the command runs"
    targets = [w.text for w in o.operands if "=" not in w.text]
    overrides = dict(w.text.split("=", 1) for w in o.operands if "=" in w.text)
    return _recipes_reason(program, text, targets, overrides, ctx)


def _recipes_reason(
    program: str, text: str, targets: list[str], overrides: dict[str, str], ctx: _Ctx
) -> str | None:
    text = text.replace("\\\n", " ")
    if re.search(r"^\s*-?s?include\s", text, re.MULTILINE):
        return f"{program}: the Makefile includes other makefiles"
    variables = dict(_MAKE_DEFAULTS)
    variables.update(overrides)
    rules: dict[str, tuple[list[str], list[list[str]]]] = {}
    patterns: list[str] = []
    order: list[str] = []
    current: list[str] = []
    for line in text.split("\n"):
        if line.startswith("\t"):
            current.append(line[1:].lstrip("@+- \t"))
            continue
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        current = []
        assign = _MAKE_ASSIGN.match(line)
        rule = None if assign else _MAKE_RULE.match(line)
        if assign:
            variables.setdefault(assign.group(1), assign.group(2))
        elif rule:
            deps, _, inline = rule.group(2).partition(";")
            if inline.strip():
                current.append(inline.strip())
            names = rule.group(1).split()
            if any("%" in n for n in names):
                patterns.extend(current)
                current = patterns
                continue
            for name in names:
                entry = rules.setdefault(name, ([], []))
                entry[0].extend(deps.split())
                entry[1].append(current)
                order.append(name)
    wanted = targets or [t for t in order if not t.startswith(".")][:1]
    seen: set[str] = set()
    lines: list[str] = []
    while wanted:
        name = wanted.pop()
        if name in seen:
            continue
        seen.add(name)
        if name not in rules:
            lines.extend(patterns)  # built by a pattern rule, if any matches
            continue
        deps, recipes = rules[name]
        wanted.extend(deps)
        lines.extend(line for recipe in recipes for line in recipe)
    for shell in re.findall(r"\$[({]shell\s+([^)}]*)[)}]", text):
        lines.append(shell)
    for line in lines:
        reason = _shell_text(program, _substitute(line.replace("$$", "\0"), variables), ctx)
        if reason:
            return reason
    return None


_MAKE_AUTOMATIC = re.compile(r"\$([@<^?*+|%]|[({][@<^?*+%][DF][)}])")


def _substitute(line: str, variables: dict[str, str]) -> str:
    """A recipe line as the shell gets it: make's variables replaced by their values, the
    automatic ones (``$@``, ``$<``…) by a shell variable (known only when make runs)."""
    line = _MAKE_AUTOMATIC.sub("${MAKE_AUTOMATIC}", line)
    for _ in range(8):
        new = _MAKE_VAR.sub(lambda m: variables.get(m.group(1), m.group(0)), line)
        if new == line:
            break
        line = new
    return line.replace("\0", "$")


# =========================================================================== node packages
_RUN_ALIASES = {"run", "run-script", "rum", "urn"}
_LIFECYCLE = {"test", "t", "tst", "start", "stop", "restart"}


def _node_scripts(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    """npm/pnpm/yarn run SCRIPT (``yarn SCRIPT``, ``npm test``): the package.json script and
    its pre/post scripts are classified as commands. npx, bunx, ``pnpm dlx``, ``npm exec``
    run a package's code, which cannot be read ahead: irreversible."""
    o = _options(args, "wC", ("workspace", "prefix", "dir", "cwd"), stop_at_operand=True)
    words = [w.text for w in o.operands]
    where = o.values.get("C") or next(
        (_long_word(o, k) for k in ("prefix", "dir", "cwd") if k in o.longs), None
    )
    if where is not None and ctx.cwd is not None:
        ctx = ctx.deeper(cwd=None if where.dynamic else _expand(where, ctx.cwd)[0])
    if program in ("npx", "bunx", "pnpx"):
        return f"{program}: runs a package's code, which cannot be read ahead"
    if words[:1] in (["exec"], ["x"], ["dlx"]):
        return f"{program} {words[0]}: runs a package's code, which cannot be read ahead"
    if not words:
        return None
    direct = False
    if words[0] in _RUN_ALIASES:
        name = words[1] if len(words) > 1 else ""
    elif words[0] in _LIFECYCLE:
        name = {"t": "test", "tst": "test"}.get(words[0], words[0])
    elif program in ("yarn", "pnpm"):
        name, direct = words[0], True  # a script name given directly runs that script
    else:
        return None
    if not name:
        return None
    if ctx.cwd is None:
        return f"{program}: runs a script not known before the command runs"
    package, reason = _locate(program, _Word("package.json"), ctx)
    if package is None:
        return None if direct else reason  # `yarn add` needs no package.json
    text = _read(package, ctx)
    try:
        scripts = json.loads(text or "").get("scripts") or {}
    except (ValueError, AttributeError):
        return f"{program}: runs a script from a package.json that cannot be read"
    if not isinstance(scripts, dict):
        return None
    for key in (f"pre{name}", name, f"post{name}"):
        body = scripts.get(key)
        if isinstance(body, str):
            reason = _shell_text(f"{program} run {key}", body, ctx)
            if reason:
                return reason
    return None


def _package_manager(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    """npm, pnpm, yarn: a script or package runner, else removing packages."""
    return _node_scripts(program, args, ctx) or _packages(program, args, ctx)
