"""Law 1 handlers: clients of other systems' data — key-value and document stores, database
administration tools, release managers and object-storage CLIs."""

from __future__ import annotations

from ._core import _Ctx, _options
from ._lexer import _Word

_RCLONE_CHANGES = frozenset(
    {
        "purge",
        "delete",
        "deletefile",
        "rmdir",
        "rmdirs",
        "sync",
        "bisync",
        "move",
        "moveto",
        "cleanup",
        "copy",
        "copyto",
        "copyurl",
        "rcat",
        "dedupe",
    }
)


def _rclone(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    """rclone subcommands that delete, move or replace files (locally or remotely)."""
    o = _options(args, "", ("config", "log-file", "filter", "exclude", "include"))
    if "n" in o.flags or "dry-run" in o.longs:
        return None
    verb = o.operands[0].text if o.operands else ""
    if verb in _RCLONE_CHANGES:
        return f"{program} {verb}: deletes or replaces files"
    return None


_REDIS_READS = frozenset(
    "get mget getrange strlen exists type ttl pttl keys scan sscan hscan zscan hget hgetall"
    " hmget hkeys hvals hlen hexists hstrlen lrange lindex llen smembers sismember smismember"
    " scard srandmember zrange zrevrange zrangebyscore zrevrangebyscore zrangebylex zscore"
    " zrank zrevrank zcard zcount zlexcount xlen xrange xrevrange xinfo pfcount bitcount"
    " getbit dbsize info ping echo time lastsave role memory object dump randomkey lpos"
    " geopos geodist geohash geosearch command slowlog latency client config".split()
)
_REDIS_READ_SUBS = {
    "memory": {"usage", "stats", "doctor", "help"},
    "object": {"encoding", "freq", "idletime", "refcount", "help"},
    "client": {"list", "info", "getname", "id", "help"},
    "config": {"get", "help"},
    "slowlog": {"get", "len", "help"},
    "latency": {"latest", "history", "doctor", "graph", "help"},
    "command": {"count", "info", "docs", "list", "getkeys", "help"},
    "xinfo": {"stream", "groups", "consumers", "help"},
}
_REDIS_TOOLS = frozenset(
    {"scan", "bigkeys", "memkeys", "hotkeys", "stat", "latency", "latency-history", "ldb"}
)


def _redis(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    """redis-cli: only the read commands in :data:`_REDIS_READS` pass; any other command,
    a Lua script (``--eval``), ``--pipe`` or commands read from stdin may write."""
    o = _options(
        args,
        "hpsanuridD",
        ("user", "pass", "askpass", "eval", "pattern", "count", "tls", "cacert", "sni", "rdb"),
        stop_at_operand=True,
    )
    if "eval" in o.longs or "pipe" in o.longs or "x" in o.flags:
        return f"{program}: runs a script or commands read from stdin"
    if o.longs.keys() & {"rdb", "functions-rdb"}:
        return f"{program} --rdb: writes a dump file"
    if not o.operands:
        if o.longs.keys() & _REDIS_TOOLS or o.longs.keys() & {"help", "version"}:
            return None
        return f"{program}: runs commands read from stdin"
    command = o.operands[0].text.lower()
    sub = o.operands[1].text.lower() if len(o.operands) > 1 else ""
    if command not in _REDIS_READS or (
        command in _REDIS_READ_SUBS and sub not in _REDIS_READ_SUBS[command]
    ):
        return f"{program} {o.operands[0].text}: changes the Redis database"
    return None


def _mongo(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    """mongo/mongosh run JavaScript against a database: given with ``--eval``, in a script
    file, or read from stdin; none of it is read ahead."""
    o = _options(args, "uph", ("eval", "username", "password", "host", "port", "file"))
    if "eval" in o.longs or "file" in o.longs or "f" in o.flags:
        return f"{program}: runs database code (--eval)"
    if any(w.text.endswith(".js") for w in o.operands):
        return f"{program}: runs a database script"
    if o.longs.keys() & {"help", "version", "nodb"} and not o.operands:
        return None
    return f"{program}: runs database commands read from stdin"


def _helm(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    o = _options(args, "n", ("namespace", "kube-context", "kubeconfig"), stop_at_operand=True)
    verb = o.operands[0].text if o.operands else ""
    if verb in ("uninstall", "delete", "del", "un", "rollback"):
        return f"{program} {verb}: removes or replaces a release"
    return None


def _s3cmd(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    texts = [w.text for w in args]
    for t in texts:
        if t in ("del", "rm", "rb", "deleteall"):
            return f"{program} {t}: deletes cloud storage"
        if t in ("--delete-removed", "--delete-after"):
            return f"{program} {t}: deletes at the destination"
    return None


def _gsutil(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    o = _options(args, "ohp", stop_at_operand=True)
    words = [w.text for w in o.operands]
    if words[:1] and words[0] in ("rm", "rb", "mv"):
        return f"{program} {words[0]}: deletes cloud storage"
    if words[:1] == ["rsync"] and any(t.startswith("-") and "d" in t for t in words[1:]):
        return f"{program} rsync -d: deletes at the destination"
    return None


def _mysqladmin(program: str, args: list[_Word], ctx: _Ctx) -> str | None:
    changes = ("drop", "flush", "kill", "shutdown", "password", "reload", "refresh")
    for w in args:
        if w.text.lower().startswith(changes):
            return f"{program} {w.text}: changes the database server"
    return None
