"""Every bus message type survives the envelope codec and the EventLog, property-tested.

Strategies are built generically from each Struct's msgspec type info, so a new message
type or field is covered without touching this file.
"""

from __future__ import annotations

import functools
import typing
from collections.abc import Iterator
from pathlib import Path

import msgspec
import msgspec.inspect as mi
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from artoo.eventstore import EventLog, envelope_tail
from artoo.schemas import (
    MESSAGE_TYPES,
    AnyMessage,
    Envelope,
    ExecutionResult,
    Message,
    ToolCall,
    decode_envelope,
    encode_envelope,
)

TEXT = st.text(st.characters(codec="utf-8"), max_size=12)
INTS = st.integers(min_value=-(2**63), max_value=2**64 - 1)
FLOATS = st.floats(allow_nan=False)
JSON_LIKE = st.recursive(
    st.none() | st.booleans() | INTS | FLOATS | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=6,
)


def strategy_for(t: mi.Type) -> st.SearchStrategy[typing.Any]:
    """A hypothesis strategy for any value of msgspec type ``t`` (the types our schemas use)."""
    match t:
        case mi.AnyType():
            return JSON_LIKE
        case mi.NoneType():
            return st.none()
        case mi.BoolType():
            return st.booleans()
        case mi.IntType():
            return INTS
        case mi.FloatType():
            return FLOATS
        case mi.StrType():
            return TEXT
        case mi.LiteralType():
            return st.sampled_from(t.values)
        case mi.ListType():
            return st.lists(strategy_for(t.item_type), max_size=3)
        case mi.VarTupleType():
            return st.lists(strategy_for(t.item_type), max_size=3).map(tuple)
        case mi.DictType():
            return st.dictionaries(strategy_for(t.key_type), strategy_for(t.value_type), max_size=3)
        case mi.UnionType():
            return st.one_of(*(strategy_for(member) for member in t.types))
        case mi.StructType():
            return struct_strategy(t)
    raise NotImplementedError(f"no strategy for {t!r}; extend strategy_for")


def struct_strategy(t: mi.StructType) -> st.SearchStrategy[typing.Any]:
    """Build the Struct from drawn fields; fields with defaults are sometimes left out."""
    required = {f.name: strategy_for(f.type) for f in t.fields if f.required}
    optional = {f.name: strategy_for(f.type) for f in t.fields if not f.required}
    return st.fixed_dictionaries(required, optional=optional).map(lambda kw: t.cls(**kw))


def message_strategy(cls: type[Message]) -> st.SearchStrategy[Message]:
    """Every field of a message type, drawn."""
    info = mi.type_info(cls)
    assert isinstance(info, mi.StructType)
    return struct_strategy(info)


@functools.cache
def envelope_strategy(cls: type[Message]) -> st.SearchStrategy[Envelope]:
    """An envelope around a drawn ``cls`` body with drawn header fields."""
    return st.builds(
        Envelope,
        seq=st.integers(min_value=0, max_value=2**63),
        ts=FLOATS,
        task_id=st.none() | TEXT,
        sender=TEXT,
        to=st.none() | TEXT,
        cause=st.none() | st.integers(min_value=0, max_value=2**63),
        body=message_strategy(cls),
    )


TYPES = pytest.mark.parametrize("cls", MESSAGE_TYPES, ids=lambda c: c.__name__)


def test_message_types_are_exactly_the_union() -> None:
    """MESSAGE_TYPES is what the round-trip tests cover; it must be the whole union."""
    assert set(MESSAGE_TYPES) == set(typing.get_args(AnyMessage))
    assert len(MESSAGE_TYPES) == len(set(MESSAGE_TYPES))


@TYPES
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_envelope_roundtrip(cls: type[Message], data: st.DataObject) -> None:
    """decode(encode(envelope)) == envelope, for every message type and every field."""
    envelope = data.draw(envelope_strategy(cls))
    encoded = encode_envelope(envelope)
    decoded = decode_envelope(encoded)
    assert decoded == envelope
    assert type(decoded.body) is cls
    assert decoded.kind == cls.__name__
    assert encode_envelope(decoded) == encoded


@pytest.fixture(scope="module")
def shared_log(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EventLog]:
    """One log for all examples of the log round-trip (each example appends one group)."""
    path: Path = tmp_path_factory.mktemp("roundtrip") / "events"
    with EventLog.open(path, durability="none") as log:
        yield log


@TYPES
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_log_roundtrip_both_write_paths(
    cls: type[Message], data: st.DataObject, shared_log: EventLog
) -> None:
    """A message appended by ``append`` and by the bus's ``append_encoded`` reads back equal."""
    log = shared_log
    envelope = data.draw(envelope_strategy(cls))
    first = log.last_seq + 1
    log.append([msgspec.structs.replace(envelope, seq=0)])
    tail = envelope_tail(
        envelope.task_id, envelope.sender, envelope.to, envelope.cause, envelope.body
    )
    log.append_encoded(first + 1, envelope.ts, [envelope.task_id], [tail])
    read = list(log.read(first, first + 1))
    assert read == [
        msgspec.structs.replace(envelope, seq=first),
        msgspec.structs.replace(envelope, seq=first + 1),
    ]


def test_worked_example_nested_message() -> None:
    """A hand-written ExecutionResult with a structured ToolCall keeps every nested field."""
    call = ToolCall(tool="shell", args={"cmd": ["ls", "-la"], "n": 2}, target="/w/src", ok=False)
    body = ExecutionResult(subtask_id="s1", attempt=2, ok=False, tool_calls=[call], error="x")
    envelope = Envelope(7, 1_700_000_000.5, "t1", "executor", "pair-1", 6, body)
    decoded = decode_envelope(encode_envelope(envelope))
    assert decoded.body.tool_calls[0].args == {"cmd": ["ls", "-la"], "n": 2}
    assert decoded.body.tool_calls[0].target == "/w/src"
    assert (decoded.seq, decoded.to, decoded.cause) == (7, "pair-1", 6)
