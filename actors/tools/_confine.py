"""Guards applied to every call: paths confined beneath the workspace (symlinks resolved
inside it, never on the host: :mod:`._resolve`), blocked targets (also inside shell
commands, and every path a sandboxed command touched), the one hazard check of a path a
host tool names, and the Law 1 gate."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import msgspec

from artoo.actors.law1 import ShellSyntaxError, decide_effects, parse_commands
from artoo.schemas import FileEffect, Law1Check

from ._fs import lstat_at, open_dir
from ._hazard import GIT_DIR_MARKS, git_name, is_git_dir, path_hazard
from ._resolve import WorkspaceView, resolve
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
        view = WorkspaceView(self.workspace)
        try:
            where = resolve(view, relative.as_posix(), self._roots())
        finally:
            view.close()
        if where.rel is None:
            how = "through a symlink" if where.escape == "outside" else "(a symlink loop)"
            raise _ToolError(
                f"path '{raw}' leads outside the workspace {how}",
                relative.as_posix(),
                "outside_workspace",
            )
        return where.rel or "."

    def _roots(self) -> tuple[str, ...]:
        """The workspace's absolute paths (an absolute symlink target beneath one stays
        inside)."""
        return tuple(dict.fromkeys((str(self.workspace), str(self._given_root))))

    def _blocked_roots(self, call: _Call) -> list[tuple[str, Path]]:
        roots = []
        for entry in call.blocked:
            if entry.strip():
                base = Path(entry) if os.path.isabs(entry) else self.workspace / entry
                roots.append((entry, base.resolve()))
        return roots

    def _blocked_rels(self, call: _Call) -> list[tuple[str, str]]:
        """The blocked targets inside the workspace as workspace-relative paths, each as
        written and as resolved: ``(entry, path)``."""
        rels = []
        for entry, root in self._blocked_roots(call):
            base = Path(entry) if os.path.isabs(entry) else self.workspace / entry
            for path in {Path(os.path.normpath(base)), root}:
                for ws in (self.workspace, self._given_root):
                    if path == ws or ws in path.parents:
                        rels.append((entry, path.relative_to(ws).as_posix()))
        return rels

    def _check_blocked_paths(self, paths: Iterable[str], call: _Call) -> None:
        """Refuse when any of the workspace-relative ``paths`` is a blocked target or lies
        beneath one — every one checked, however many."""
        rels = self._blocked_rels(call)
        if not rels:
            return
        for path in paths:
            for entry, rel in rels:
                if rel == "." or path == rel or path.startswith(rel + "/"):
                    shown = path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
                    raise _ToolError(
                        f"blocked target '{entry}' (path '{shown}')", shown, "blocked_target"
                    )

    def _git_dir(self, rel: str, also: str = "") -> bool:
        """Whether the workspace directory ``rel`` is laid out as a git repository (with
        the file ``also`` about to be written); the workspace itself also when it lies in
        a ``.git`` directory."""
        if not rel and any(git_name(p) == ".git" for p in self.workspace.parts):
            return True
        root = open_dir(self.workspace)
        try:
            names = {
                m
                for m in ("HEAD", *GIT_DIR_MARKS)
                if lstat_at(root, f"{rel}/{m}" if rel else m) is not None
            }
        except OSError:
            return False
        finally:
            os.close(root)
        head, _, name = also.rpartition("/")
        if also and head == rel:
            names.add(name)
        return is_git_dir(names)

    def _gate_named_path(self, call: _Call, tool: str, value: str) -> None:
        """The one hazard check for a host tool: when its target argument names a
        workspace path with a hazard (:func:`~._hazard.path_hazard`), Law 1 asks — what a
        host function does there cannot be observed."""
        if not value or "\x00" in value or "://" in value:
            return
        path = Path(os.path.normpath(value))
        if path.is_absolute():
            for ws in (self.workspace, self._given_root):
                if path == ws or ws in path.parents:
                    rel = path.relative_to(ws).as_posix()
                    break
            else:
                return
        elif str(path) == ".." or str(path).startswith("../"):
            return
        else:
            rel = path.as_posix()
        if rel == ".":
            return
        found = path_hazard(rel, git_dirs=self._git_dir)
        if found is None:
            return
        exists = os.path.lexists(self.workspace / rel)
        effect = FileEffect(
            path=rel,
            change="modified" if exists else "created",
            kind="other",
            hazard=found[0],
            summary=f"named by the host tool {tool}: {found[1]}",
        )
        self._judge(call, decide_effects((effect,)), tool, f"{tool} {rel}", (effect,))

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
                try:
                    resolved = lexical.resolve()
                except OSError:  # a magic link it may not read (/proc/1/root): as written
                    resolved = lexical
                for path in {lexical, resolved}:
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
