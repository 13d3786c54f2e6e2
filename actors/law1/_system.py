"""Law 1 handlers: processes, services, packages, containers, clusters, firewalls, HTTP
clients and cloud CLIs."""

from __future__ import annotations

import re

from ._core import _Ctx, _Handler, _long_word, _options, _write_reason
from ._lexer import _Word


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
