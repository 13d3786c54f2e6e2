"""Guards applied to every call: paths confined beneath the workspace, blocked targets
(also inside shell commands), and the Law 1 gate."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import msgspec

from artoo.actors.law1 import ShellSyntaxError, parse_commands
from artoo.schemas import FileEffect, Law1Check

from ._spill import _record_args
from ._types import ConfirmationNeeded, Unasked, _Call, _ToolError

_PATHISH = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,7}$")


class _Guards:
    """Confinement to the workspace, blocked targets, and the Law 1 gate (a mixin of
    ToolRegistry; the attributes below are set by its constructor)."""

    workspace: Path
    _given_root: Path
    blocked_targets: tuple[str, ...]
    _confirm: Callable[[ConfirmationNeeded], bool]

    def _confine(self, raw: str) -> str:
        """The workspace-relative resolved path of ``raw``; refuses any escape."""
        if not raw or "\x00" in raw:
            raise _ToolError(f"invalid path {raw!r}", raw or None)
        path = Path(raw)
        if path.is_absolute():
            lexical = Path(os.path.normpath(path))
            for root in (self.workspace, self._given_root):
                if lexical == root or root in lexical.parents:
                    relative = lexical.relative_to(root)
                    break
            else:
                raise _ToolError(f"path '{raw}' is outside the workspace", raw, "outside_workspace")
        else:
            norm = os.path.normpath(raw)
            if norm == ".." or norm.startswith("../"):
                raise _ToolError(
                    f"path '{raw}' escapes the workspace (..)", raw, "outside_workspace"
                )
            relative = Path(norm)
        resolved = (self.workspace / relative).resolve()
        if resolved != self.workspace and self.workspace not in resolved.parents:
            raise _ToolError(
                f"path '{raw}' leads outside the workspace through a symlink",
                relative.as_posix(),
                "outside_workspace",
            )
        return resolved.relative_to(self.workspace).as_posix()

    def _blocked_roots(self, call: _Call) -> list[tuple[str, Path]]:
        roots = []
        for entry in call.blocked:
            if entry.strip():
                base = Path(entry) if os.path.isabs(entry) else self.workspace / entry
                roots.append((entry, base.resolve()))
        return roots

    def _check_blocked(self, path: Path, call: _Call, shown: str) -> None:
        for entry, root in self._blocked_roots(call):
            if path == root or root in path.parents:
                raise _ToolError(
                    f"blocked target '{entry}' (path '{shown}')", shown, "blocked_target"
                )

    def _check_blocked_name(self, value: str, call: _Call) -> None:
        norm = os.path.normpath(value) if value else value
        for entry in call.blocked:
            blocked = os.path.normpath(entry) if entry.strip() else ""
            if blocked and (norm == blocked or norm.startswith(blocked.rstrip("/") + "/")):
                raise _ToolError(f"blocked target '{entry}' ({value!r})", value, "blocked_target")

    def _judge(
        self,
        call: _Call,
        check: Law1Check,
        tool: str,
        action: str,
        effects: tuple[FileEffect, ...] = (),
        *,
        sandboxed: bool = False,
    ) -> None:
        """Record Law 1's decision ``check`` on the call (``ToolCall.law1``) and, when it
        asks, ask ``confirm`` (:meth:`_gate`: a denial refuses the call). A command line the
        record would cut is logged whole in the check: it is the decision's input."""
        if check.basis != "effects" and _record_args({"c": action})["c"] != action:
            check = msgspec.structs.replace(check, command=action)
        call.law1.append(check)
        if check.ask:
            self._gate(call, tool, check.target, check.reason, action, effects, sandboxed=sandboxed)

    def _gate(
        self,
        call: _Call,
        tool: str,
        target: str | None,
        reason: str,
        action: str,
        effects: tuple[FileEffect, ...] = (),
        *,
        sandboxed: bool = False,
    ) -> None:
        """Law 1: ask ``confirm``; a denial (or a failing confirm) refuses the call, and so
        does a confirm that raises :class:`Unasked` (with its refusal, not a denial).
        ``effects`` is what approving changes (shown to the operator and logged)."""
        request = ConfirmationNeeded(
            effects=effects,
            tool=tool,
            args=_record_args(call.args),
            target=target,
            reason=reason,
            action=action,
            subtask_id=call.subtask_id,
            attempt=call.attempt,
        )
        try:
            approved = self._confirm(request) is True
        except Unasked as exc:  # refused without asking: its own reason, no denial
            raise _ToolError(
                exc.message, target, exc.refusal, effects=effects, sandboxed=sandboxed
            ) from None
        except Exception as exc:
            approved = False
            reason = f"{reason} (confirmation failed: {type(exc).__name__}: {exc})"
        if not approved:
            raise _ToolError(
                f"[LAW1] denied: {reason}",
                target,
                "law1_denied",
                effects=effects,
                sandboxed=sandboxed,
            )

    def _file(self, raw: str, call: _Call) -> tuple[str, Path]:
        relative = self._confine(raw)
        full = self.workspace / relative
        self._check_blocked(full, call, relative)
        return relative, full

    # ----------------------------------------------------------------- built-in tools
    def _lexical(self, raw: str) -> str:
        path = Path(raw)
        if path.is_absolute():
            for root in (self.workspace, self._given_root):
                if path == root or root in path.parents:
                    return path.relative_to(root).as_posix()
            raise _ToolError(f"path '{raw}' is outside the workspace", raw, "outside_workspace")
        return raw

    def _shell_target(self, command: str) -> str:
        """The first path-like argument of the command line, else its program."""
        try:
            commands = parse_commands(command)
        except ShellSyntaxError:
            return command.split()[0]
        for cmd in commands:
            for arg in (*cmd.args, *cmd.redirects):
                if arg not in cmd.inline and self._pathish(arg):
                    return self._shown(arg)
        return next((c.program for c in commands if c.program), command.split()[0])

    def _pathish(self, arg: str) -> bool:
        if not arg or arg.startswith("-") or "://" in arg or "=" in arg.split("/")[0]:
            return False
        return "/" in arg or bool(_PATHISH.search(arg)) or os.path.lexists(self.workspace / arg)

    def _shown(self, arg: str) -> str:
        full = Path(os.path.normpath(self.workspace / os.path.expanduser(arg)))
        if full == self.workspace or self.workspace in full.parents:
            return full.relative_to(self.workspace).as_posix()
        return arg

    def _check_shell_blocked(self, command: str, call: _Call, target: str) -> None:
        roots = self._blocked_roots(call)
        if not roots:
            return
        try:
            commands = parse_commands(command)
            words = [w for c in commands for w in (*c.args, *c.redirects) if w not in c.inline]
            programs = {c.program for c in commands}
            # a path may be relative to a directory the command line changes into: try
            # each (a cd inside a branch that does not run only makes this stricter)
            bases = {self.workspace} | {
                Path(os.path.normpath(self.workspace / os.path.expanduser(d)))
                for c in commands
                if c.program in ("cd", "pushd")
                for d in _path_candidates(c.args[:1])
            }
        except ShellSyntaxError:
            words = command.split()
            programs = set(words[:1])
            bases = {self.workspace}
        for entry, _ in roots:
            if "/" not in entry and entry in programs:
                raise _ToolError(f"blocked target '{entry}' (program)", target, "blocked_target")
        for word in _path_candidates(words):
            for base in bases:
                lexical = Path(os.path.normpath(base / os.path.expanduser(word)))
                for path in {lexical, lexical.resolve()}:
                    for entry, root in roots:
                        if path == root or root in path.parents:
                            raise _ToolError(
                                f"blocked target '{entry}' (argument '{word}')",
                                target,
                                "blocked_target",
                            )


def _path_candidates(words: Iterable[str]) -> Iterator[str]:
    """The words that may name a path: plain words, and the value of ``--opt=value`` or
    ``NAME=value`` (URLs and bare options are not paths)."""
    for word in words:
        if "=" in word and (word.startswith("-") or "/" not in word.split("=", 1)[0]):
            word = word.split("=", 1)[1]
        if word and not word.startswith("-") and "://" not in word:
            yield word


def _globby(part: str) -> bool:
    return any(c in part for c in "*?[")
