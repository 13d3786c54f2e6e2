"""Law 1 handlers: git subcommands that lose work or rewrite shared history."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import replace

from ._core import _Ctx, _expand, _options, _text_reason
from ._lexer import _Word


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
    configs = [args[i + 1].text for i, w in enumerate(args[:-1]) if w.text == "-c"]
    configs += [w.text[2:] for w in args if w.text.startswith("-c") and len(w.text) > 2]
    for setting in configs:
        key, _, value = setting.partition("=")
        key = key.lower()
        if key == f"alias.{sub.lower()}" and not value.startswith("!"):
            words = [_Word(t) for t in value.split()]
            reason = _git(program, [*words, *o.operands[1:]], ctx.deeper())
            if reason:
                return f"{program} {sub} (alias): {reason}"
        elif _GIT_LOADS.search(key):
            return (
                f"{program} -c {key}: runs hooks or loads configuration named on the command line"
            )
        elif value.startswith("!") or _GIT_RUNS.search(key):
            reason = _text_reason(f"{program} -c {key}", [_Word(value.lstrip("!"))], ctx)
            if reason:
                return reason
    handler = _GIT.get(sub)
    reason = handler(o.operands[1:], ctx) if handler else None
    return f"{program} {sub}: {reason}" if reason else None


_GIT_RUNS = re.compile(
    r"^(core\.(editor|pager|sshcommand|fsmonitor|askpass|gitproxy)|sequence\.editor"
    r"|pager\..*|credential\..*helper|diff\..*(textconv|command)|merge\..*driver"
    r"|filter\..*(clean|smudge|process)|.*\.(program|command|cmd|tool)|uploadpack\..*hook"
    r"|gpg\..*program)$"
)  # keys whose value git runs as a command
_GIT_LOADS = re.compile(r"^(core\.hookspath|include\..*|includeif\..*)$")


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
