"""Law 1's remote-effects gate: the part of a command the sandbox cannot observe.

A sandboxed command's effects on the workspace are observed, so only what it does to
*other* systems still has to be read: a database server, a container daemon, a cloud
account, a mail relay, a remote host. :func:`classify_remote` lists every simple command
(wrappers removed, ``sh -c``/``eval`` strings and substitutions included) and hands those
whose program acts on another system to the full classifier. With the network allowed, a
command whose program is only known at run time, or a shell reading commands from stdin,
counts too (it could be any of them).
"""

from __future__ import annotations

import fnmatch
import os
import shlex

from ._classify import classify_shell, parse_commands
from ._interp import _SHELLS
from ._lexer import ShellSyntaxError

REMOTE_PROGRAMS = frozenset(
    {
        # other hosts and services over the network, or a local daemon's socket
        "ssh", "scp", "rsync", "sftp", "curl", "wget", "http", "https", "xh",
        "mail", "mailx", "sendmail", "mutt", "neomutt", "msmtp", "ssmtp", "swaks",
        "gh", "aws", "gcloud", "az", "gsutil", "s3cmd", "rclone",
        "docker", "podman", "nerdctl", "kubectl", "helm", "terraform", "tofu",
        "psql", "mysql", "mariadb", "mysqladmin", "redis-cli", "valkey-cli", "mongo", "mongosh",
        "dropdb", "dropuser", "systemctl", "service", "git",
    }
)  # fmt: skip
"""Programs whose effects can lie outside the sandbox."""


def _programs(program: str) -> list[str]:
    """The program names ``program`` may stand for: itself, or every remote program a glob
    in it matches (``/usr/bin/redis-c?i`` is redis-cli)."""
    if not any(c in program for c in "*?["):
        return [program]
    return [p for p in sorted(REMOTE_PROGRAMS) if fnmatch.fnmatchcase(p, program)]


def _needs_reading(program: str, args: tuple[str, ...]) -> bool:
    if program == "git":  # only pushing reaches another system
        return "push" in args or "send-email" in args
    if program in ("rsync", "scp"):  # a local copy is observed like any other
        return any(":" in a for a in args if not a.startswith("-"))
    return program in REMOTE_PROGRAMS


def classify_remote(
    command: str, cwd: str | os.PathLike[str], *, network: bool = False
) -> tuple[bool, str]:
    """``(irreversible, reason)`` for what ``command`` would do outside the sandbox.

    Each simple command whose program is in :data:`REMOTE_PROGRAMS` is classified as a
    command of its own by :func:`~artoo.actors.law1.classify_shell`. A command that cannot
    be read counts only with ``network`` (without it, nothing remote is reachable but the
    daemons' sockets the sandbox hides).
    """
    try:
        commands = parse_commands(command)
    except ShellSyntaxError as exc:
        return (True, f"cannot parse: {exc}") if network else (False, "")
    for simple in commands:
        program = simple.program
        if network and (program.startswith("$") or (not program and simple.args)):
            return True, f"{program or 'shell'}: program not known before the command runs"
        if network and program in _SHELLS and not simple.inline and not simple.args:
            return True, f"{program}: runs commands read from stdin"
        for name in _programs(program):
            if not _needs_reading(name, simple.args):
                continue
            verdict = classify_shell(shlex.join([name, *simple.args]), cwd)
            if verdict.irreversible:
                return True, verdict.reason
    return False, ""
