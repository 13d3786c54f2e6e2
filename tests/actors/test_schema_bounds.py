"""The schema a model is asked to fill bounds every list and every free string: a server
that enforces it by a grammar cannot let a small model run on inside one value (a
question's options "1" … "84" once ran to the token cap twice, leaving no JSON)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from hypothesis import given
from hypothesis import strategies as st

from artoo.actors.llm._types import SCHEMA_MAX_CHARS, SCHEMA_MAX_ITEMS, _bounded, _json_schema
from artoo.actors.verification.answers import PerceiverAnswer, PlanAnswer


def _nodes(node: Any) -> list[dict[str, Any]]:
    if isinstance(node, list):
        return [n for item in node for n in _nodes(item)]
    if not isinstance(node, dict):
        return []
    return [node, *(n for v in node.values() for n in _nodes(v))]


def test_the_perceivers_and_planners_schemas_bound_every_list_and_string() -> None:
    for answer in (PerceiverAnswer, PlanAnswer):
        nodes = _nodes(_json_schema(answer))
        arrays = [n for n in nodes if n.get("type") == "array"]
        strings = [n for n in nodes if n.get("type") == "string"]
        assert arrays and strings
        assert all(n["maxItems"] == SCHEMA_MAX_ITEMS for n in arrays)
        assert all(n["maxLength"] == SCHEMA_MAX_CHARS for n in strings)
    options = _json_schema(PerceiverAnswer)["$defs"]["QuestionAnswer"]["properties"]["options"]
    assert options["maxItems"] == SCHEMA_MAX_ITEMS


class _Own(msgspec.Struct):
    short: Annotated[str, msgspec.Meta(max_length=5)]
    few: Annotated[list[int], msgspec.Meta(max_length=2)]
    mode: Literal["a", "b"] = "a"


def test_a_stated_bound_and_an_enum_are_kept_as_they_are() -> None:
    props = _json_schema(_Own)["properties"]
    assert props["short"]["maxLength"] == 5 and props["few"]["maxItems"] == 2
    assert "maxLength" not in props["mode"]


def test_decoding_is_not_bounded_by_the_schema() -> None:
    """The bound is asked of the server, not checked on the answer: a longer list from a
    server that does not enforce the schema still decodes."""
    many = {
        "intent": "x",
        "kind": "change",
        "values": [str(i) for i in range(SCHEMA_MAX_ITEMS + 4)],
    }
    answer = msgspec.json.decode(msgspec.json.encode(many), type=PerceiverAnswer)
    assert len(answer.values) == SCHEMA_MAX_ITEMS + 4


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["type", "items", "x", "enum"]), inner, max_size=3)
    ),
    max_leaves=12,
)


@given(_json)
def test_bounding_adds_bounds_only_and_is_idempotent(node: Any) -> None:
    once = _bounded(node)
    assert _bounded(once) == once
    for before, after in zip(_nodes(node), _nodes(once), strict=True):
        assert {k: v for k, v in after.items() if k not in ("maxItems", "maxLength")} == {
            k: _bounded(v) for k, v in before.items() if k not in ("maxItems", "maxLength")
        }
