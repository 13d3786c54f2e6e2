"""The ``scripted:<path>`` backend: answers from a TOML script, deterministically."""

from __future__ import annotations

import json
import os
import re
import threading
import time
import tomllib
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import msgspec

from ._types import (
    ROLE_TIERS,
    SCRIPTED_PREFIX,
    LLMError,
    LLMRequest,
    LLMResponse,
    ScriptError,
    ToolCallRequest,
    _content_text,
    _rough_tokens,
    _snippet,
    request_text,
)


# --------------------------------------------------------------------------- scripted
class ScriptToolCall(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A tool call in a script entry."""

    name: str
    arguments: dict[str, Any] = {}
    id: str | None = None


class ScriptEntry(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One ``[[response]]`` of a script (see the module docstring for the keys)."""

    role: str
    match: str | None = None
    content: str | dict[str, Any] | list[Any] | None = None
    tool_calls: list[ScriptToolCall] = []
    times: int = 1
    usage: dict[str, int] | None = None
    delay_ms: float | None = None


class _Script(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    response: list[dict[str, Any]] = []


def _entry(
    index: int, raw: Mapping[str, Any], source: str
) -> tuple[ScriptEntry, re.Pattern[str] | None]:
    where = f"{source}: response #{index}"
    try:
        entry = msgspec.convert(dict(raw), ScriptEntry)
    except msgspec.ValidationError as exc:
        raise ScriptError(f"{where}: {exc}") from exc
    if entry.role not in ROLE_TIERS:
        known = ", ".join(sorted(ROLE_TIERS))
        raise ScriptError(f"{where}: no role {entry.role!r} asks a model (roles: {known})")
    if entry.content is None and not entry.tool_calls:
        raise ScriptError(f"{where}: needs content or tool_calls")
    if entry.times < 0:
        raise ScriptError(f"{where}: times must be >= 0 (0 = unlimited)")
    if entry.delay_ms is not None and entry.delay_ms < 0:
        raise ScriptError(f"{where}: delay_ms must be >= 0")
    try:
        pattern = re.compile(entry.match) if entry.match is not None else None
    except re.error as exc:
        raise ScriptError(f"{where}: bad match pattern {entry.match!r}: {exc}") from exc
    return entry, pattern


def _entry_content(entry: ScriptEntry) -> str | None:
    if entry.content is None or isinstance(entry.content, str):
        return entry.content
    return json.dumps(entry.content, ensure_ascii=False)


class ScriptedBackend:
    """Answers from a TOML script (format in the module docstring); model ``scripted:<path>``.

    Deterministic: selection and use counts update under one lock. ``latency_ms`` is the
    simulated latency of entries without ``delay_ms``; the wait happens outside the lock,
    through ``sleep`` (injectable for tests).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        latency_ms: float = 0.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        script_path = Path(path)
        try:
            text = script_path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ScriptError(f"cannot read script {script_path}: {exc}") from exc
        self._setup(_load_toml(text, str(script_path)), str(script_path), latency_ms, sleep)

    @classmethod
    def from_text(
        cls,
        text: str,
        *,
        latency_ms: float = 0.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> ScriptedBackend:
        """A backend from the TOML text of a script."""
        return cls.from_entries(_load_toml(text, "<script>"), latency_ms=latency_ms, sleep=sleep)

    @classmethod
    def from_entries(
        cls,
        entries: Iterable[Mapping[str, Any]],
        *,
        latency_ms: float = 0.0,
        sleep: Callable[[float], None] = time.sleep,
        name: str = "<entries>",
    ) -> ScriptedBackend:
        """A backend from entries as Python dicts (the keys of a ``[[response]]``)."""
        backend = cls.__new__(cls)
        backend._setup(list(entries), name, latency_ms, sleep)
        return backend

    def _setup(
        self,
        raw_entries: list[Mapping[str, Any]],
        source: str,
        latency_ms: float,
        sleep: Callable[[float], None],
    ) -> None:
        parsed = [_entry(i, raw, source) for i, raw in enumerate(raw_entries, start=1)]
        self.source = source
        self.model = SCRIPTED_PREFIX + source
        self._entries = [entry for entry, _ in parsed]
        self._patterns = [pattern for _, pattern in parsed]
        self._used = [0] * len(parsed)
        self._by_role: dict[str, list[int]] = {}  # entry indexes per role, in file order
        for i, entry in enumerate(self._entries):
            self._by_role.setdefault(entry.role, []).append(i)
        self._spent: dict[str, int] = {}  # per role: how many leading entries are used up
        self._latency_ms = latency_ms
        self._sleep = sleep
        self._lock = threading.Lock()

    def complete(self, request: LLMRequest) -> LLMResponse:
        """The first usable entry's answer; none left → :class:`LLMError`.

        An entry's ``match`` is searched in the user-visible part of the request — every
        message but the system prompt (the user's text, the subtask, tool results) — so a
        word of a role's instructions never matches every request of that role."""
        text = request_text(request)
        visible = "\n".join(
            _content_text(m.get("content")) for m in request.messages if m.get("role") != "system"
        )
        with self._lock:
            index = self._select(request.role, visible)
            if index is None:
                raise LLMError(
                    f"script exhausted for role {request.role} ({self.source}): "
                    f"no entry left that matches {_snippet(request)!r}"
                )
            self._used[index] += 1
            use = self._used[index]
        entry = self._entries[index]
        delay_ms = self._latency_ms if entry.delay_ms is None else entry.delay_ms
        if delay_ms > 0:
            self._sleep(delay_ms / 1000)
        return self._answer(index + 1, use, entry, text, delay_ms)

    def unused(self) -> list[ScriptEntry]:
        """Entries with uses left (never those with ``times = 0``), in file order."""
        with self._lock:
            return [
                entry
                for entry, used in zip(self._entries, self._used, strict=True)
                if entry.times and used < entry.times
            ]

    def _select(self, role: str, text: str) -> int | None:
        """The first entry of ``role`` in file order with uses left whose pattern matches.
        Used-up entries never come back, so the leading ones are skipped for good (a
        script of thousands of entries used in order costs O(1) per call)."""
        indexes = self._by_role.get(role, [])
        start = self._spent.get(role, 0)
        while start < len(indexes) and self._exhausted(indexes[start]):
            start += 1
        self._spent[role] = start
        for i in indexes[start:]:
            if self._exhausted(i):
                continue
            pattern = self._patterns[i]
            if pattern is None or pattern.search(text):
                return i
        return None

    def _exhausted(self, i: int) -> bool:
        times = self._entries[i].times
        return bool(times) and self._used[i] >= times

    def _answer(
        self, number: int, use: int, entry: ScriptEntry, text: str, delay_ms: float
    ) -> LLMResponse:
        content = _entry_content(entry)
        calls = [
            ToolCallRequest(
                id=call.id or f"call_{number}_{use}_{k}",
                name=call.name,
                arguments=call.arguments,
            )
            for k, call in enumerate(entry.tool_calls, start=1)
        ]
        usage = entry.usage or {
            "prompt_tokens": _rough_tokens(text),
            "completion_tokens": _rough_tokens(
                (content or "") + "".join(json.dumps(msgspec.to_builtins(c)) for c in calls)
            ),
        }
        return LLMResponse(
            content=content,
            tool_calls=calls,
            usage=dict(usage),
            model=self.model,
            latency_ms=delay_ms,
        )


def _load_toml(text: str, source: str) -> list[Mapping[str, Any]]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ScriptError(f"{source}: not valid TOML: {exc}") from exc
    try:
        script = msgspec.convert(data, _Script)
    except msgspec.ValidationError as exc:
        raise ScriptError(f"{source}: a script holds only [[response]] entries: {exc}") from exc
    return list(script.response)
