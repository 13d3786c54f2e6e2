"""A name is a value the proof sees (``artoo.actors.verification.proof``): for a question
that asks for a name (which …, what is the name of …: ``request.duties(...).shape ==
"name"``), the values an answer states include the names it states
(``request.named_values``) — a capitalised word inside a sentence, a word in markdown
emphasis — each backed as a code-like value is: its words in what a call that worked
returned, or the path it read. Before, a plain name was no value: "what is the name of
the class in src/shapes.py that has a radius?" answered "… is Circle." after one read
stated nothing, no second derivation was asked, and the task ended ``success`` though
right. A name no tool printed is never backed; a name read off the file is proof only
when a fresh conversation reads it again and states the same name."""

from __future__ import annotations

import re

from hypothesis import assume, given
from hypothesis import strategies as st

from artoo.actors.verification.proof import (
    Corroboration,
    derivations,
)
from artoo.actors.verification.request import named_values
from artoo.schemas import ToolCall

from .proof_helpers import ask as _ask
from .proof_helpers import read_call as _read
from .proof_helpers import settle as _settle
from .proof_helpers import shell_call as _shell

SHAPES = '''"""Plane shapes."""


class Shape:
    def area(self) -> float:
        raise NotImplementedError


class Square(Shape):
    def __init__(self, side: float) -> None:
        self.side = side


class Circle(Shape):
    def __init__(self, radius: float) -> None:
        self.radius = radius
'''
INVENTORY = (
    "item,category,qty,price\nhammer,tool,12,15\nwrench,tool,7,22\napple,food,40,1\n"
    "drill,tool,3,89\ncheese,food,6,12\n"
)
RADIUS = "what is the name of the class in src/shapes.py that has a radius?"
CIRCLE = "The name of the class in src/shapes.py that has a radius is Circle."
PARENT = "what is the parent class of Square in src/shapes.py?"
PRICIEST = "which item in data/inventory.csv is the most expensive?"
DRILL = "The most expensive item in data/inventory.csv is **drill**, priced at 89."


def test_the_names_an_answer_states() -> None:
    """A capitalised word inside a sentence (not its first word) and a word in bold or
    italics, unless the request holds it or it is a stop word."""
    assert named_values(CIRCLE, RADIUS) == ["Circle"]
    assert named_values(DRILL, PRICIEST) == ["drill"]
    for form in ("__drill__", "*drill*", "**drill**"):
        assert named_values(f"The priciest is {form}.", PRICIEST) == ["drill"], form
    assert named_values("Circle has one.", RADIUS) == []  # a sentence's first word
    assert named_values("The parent of Square is Shape.", PARENT) == ["Shape"]  # asked: Square
    assert named_values("It is **the** one, The End.", RADIUS) == ["End"]  # stop words
    for label in ("**Answer:** `Circle`", "**Answer**: `Circle`", "Is `**x**`."):
        assert named_values(label, RADIUS) == [], label  # a label, a code span


def test_one_read_of_a_name_asks_for_a_second_derivation() -> None:
    """The Circle answer after one ``read_file``: backed once, by the read — not
    established by code, and the name is what the Agent-Validator asks to derive again."""
    read = _read("src/shapes.py", SHAPES)
    assert derivations("Circle", [read], RADIUS) == 1
    assert _settle(RADIUS, "question", CIRCLE, [read]) == "model"
    assert _ask(RADIUS, CIRCLE, [read]) == Corroboration(value="Circle", call=read)


def test_a_fresh_conversation_stating_the_same_name_establishes_it() -> None:
    """The fresh conversation read src/shapes.py and stated Circle, the name asked about:
    two independent readings. A fresh conversation that stated another name is one
    reading of it; the first's Circle is not in the answer that stands."""
    first = _read("src/shapes.py", SHAPES)
    again = _read("src/shapes.py", SHAPES, conversation=1)
    assert _settle(RADIUS, "question", CIRCLE, [first, again], asked="Circle") == "code"
    square = CIRCLE.replace("Circle", "Square")
    assert _settle(RADIUS, "question", square, [first, again], asked="Circle") == "model"
    assert _settle(RADIUS, "question", CIRCLE, [first, again]) == "model"  # not asked: once


def test_the_models_reading_of_a_name_question_counts() -> None:
    """A name question code cannot see — "what is the parent class of …?" has no which,
    no "name of": the model's reading (``TaskSpec.shape``) makes its name a value."""
    first = _read("src/shapes.py", SHAPES)
    again = _read("src/shapes.py", SHAPES, conversation=1)
    shape = "The parent class of Square in src/shapes.py is Shape."
    assert _ask(PARENT, shape, [first], shape="name") == Corroboration(value="Shape", call=first)
    assert _settle(PARENT, "question", shape, [first, again], asked="Shape", shape="name") == "code"


def test_an_answer_stating_only_names_is_held_to_them_whatever_the_reading() -> None:
    """With no reading of a name question (the model read "what is the parent class of
    …?" as a creation, or gave no shape), an answer that states no number and no
    code-like value is held to the names it states: asked for a second derivation, and
    proven only by two readings — where before it stated no value the proof saw and
    ended ``success`` however right, nothing asked."""
    first = _read("src/shapes.py", SHAPES)
    again = _read("src/shapes.py", SHAPES, conversation=1)
    shape = "The parent class of Square in src/shapes.py is Shape."
    assert _ask(PARENT, shape, [first]) == Corroboration(value="Shape", call=first)
    assert _settle(PARENT, "question", shape, [first]) == "model"  # one reading
    assert _settle(PARENT, "question", shape, [first, again], asked="Shape") == "code"
    assert _settle(PARENT, "creation", shape, [first, again], asked="Shape") == "code"
    other = shape.replace("Shape", "Polygon")  # a name no tool result shows
    assert _settle(PARENT, "question", other, [first, again], asked="Polygon") == "model"
    # an answer stating a number is held to its number, as before, not to its names
    held = _ask(PARENT, "Shape, on line 12.", [first])
    assert held is not None and held.value == "12"


def test_a_name_no_tool_printed_is_never_backed() -> None:
    """Hexagon stands nowhere in src/shapes.py: however often the file is read, in however
    many conversations, it is not backed — alone, or beside a name that is — where the
    same reads back Circle."""
    first = _read("src/shapes.py", SHAPES)
    again = _read("src/shapes.py", SHAPES, conversation=1)
    grep = _shell("grep -n radius src/shapes.py", "16:    def __init__(self, radius: float)\n")
    assert _settle(RADIUS, "question", CIRCLE, [first, again], asked="Circle") == "code"
    hexagon = CIRCLE.replace("Circle", "Hexagon")
    assert derivations("Hexagon", [first, again, grep], RADIUS, asked=["Hexagon"]) == 0
    assert _settle(RADIUS, "question", hexagon, [first, again], asked="Hexagon") == "model"
    both = CIRCLE.replace("Circle.", "Circle, like Hexagon.")
    assert _settle(RADIUS, "question", both, [first, again], asked="Circle") == "model"
    # nothing backs it: the ask is to show it with a tool (were its verdicts to pass:
    # grounding fails a name no tool printed), never a second derivation of it
    assert _ask(RADIUS, hexagon, [first]) == Corroboration(value="Hexagon")


def test_a_bold_name_beside_its_price() -> None:
    """``**drill**, priced at 89``: both are values, the name first — it is what is asked,
    and what the second derivation is asked about. A fresh reading that agrees on the
    name proves the answer; one that agrees only on the price does not (a listing read
    again for 89 once backed the price twice and the name once: the name asked for
    would have rested on one reading), nor does an item the tools never printed."""
    first = _read("data/inventory.csv", INVENTORY)
    again = _read("data/inventory.csv", INVENTORY, conversation=1)
    assert _settle(PRICIEST, "question", DRILL, [first]) == "model"
    asked = _ask(PRICIEST, DRILL, [first])
    assert isinstance(asked, Corroboration) and asked.value == "drill"
    assert _settle(PRICIEST, "question", DRILL, [first, again], asked="drill") == "code"
    assert _settle(PRICIEST, "question", DRILL, [first, again], asked="89") == "model"
    mallet = DRILL.replace("drill", "mallet")
    assert _settle(PRICIEST, "question", mallet, [first, again], asked="mallet") == "model"


def test_a_price_printed_twice_does_not_prove_the_name_beside_it() -> None:
    """Two different commands print 89 (the price is backed twice), one listing shows
    drill: for a question that asks which item, the name rests on one reading — not
    proven, and the second derivation is asked about the name."""
    first = _read("data/inventory.csv", INVENTORY)
    prices = _shell("sort -t, -k4 -n data/inventory.csv | tail -1 | cut -d, -f4", "89\n")
    maximum = _shell("awk -F, 'NR>1 && $4>m {m=$4} END {print m}' data/inventory.csv", "89\n")
    assert _settle(PRICIEST, "question", DRILL, [first, prices, maximum]) == "model"
    asked = _ask(PRICIEST, DRILL, [first, prices, maximum])
    assert isinstance(asked, Corroboration) and asked.value == "drill"
    # a question that asks how much is proven by the two prices alone
    howmuch = "how much does the most expensive item in data/inventory.csv cost?"
    assert _settle(howmuch, "question", DRILL, [first, prices, maximum]) == "code"


def test_a_capitalised_word_is_a_value_only_in_an_answer_to_a_name_question() -> None:
    """A question that asks how many wants a number: its answer's values are its numbers
    and code-like values, as before — Python, which no tool printed, is only the answer's
    own word. Asked which class, the same unprinted word is a name the answer states."""
    count = "how many classes does src/shapes.py define?"
    grep = _shell("grep -c '^class' src/shapes.py", "3\n")
    awk = _shell("awk '/^class/ { n++ } END { print n }' src/shapes.py", "3\n")
    assert (
        _settle(count, "question", "It defines 3 classes, as Python counts them.", [grep, awk])
        == "code"
    )
    first = _read("src/shapes.py", SHAPES)
    again = _read("src/shapes.py", SHAPES, conversation=1)
    which = "which class in src/shapes.py has a radius?"
    coded = "The class with a radius is `Circle`."
    assert _settle(which, "question", coded, [first, again], asked="Circle") == "code"
    python = "The class with a radius is `Circle`, as Python reads it."
    assert _settle(which, "question", python, [first, again], asked="Circle") == "model"


# --------------------------------------------------------------------------- property
_ESTABLISHED = (  # a name question, an answer established by code, and its calls
    (
        RADIUS,
        CIRCLE,
        [_read("src/shapes.py", SHAPES), _read("src/shapes.py", SHAPES, conversation=1)],
        "Circle",
    ),
    (
        "which class in src/shapes.py has a radius?",
        "The class with a radius is `Circle`.",
        [
            _read("src/shapes.py", SHAPES),
            _shell("grep -n '^class Circle' src/shapes.py", "15:class Circle(Shape):\n"),
        ],
        "",
    ),
    (
        PRICIEST,
        DRILL,
        [
            _read("data/inventory.csv", INVENTORY),
            _read("data/inventory.csv", INVENTORY, conversation=1),
        ],
        "drill",
    ),
)
_PRINTED = set(re.findall(r"\w+", SHAPES + INVENTORY + "src/shapes.py data/inventory.csv"))


@given(
    case=st.sampled_from(_ESTABLISHED),
    name=st.from_regex(r"[A-Z][a-z]{2,9}", fullmatch=True),
    form=st.sampled_from(["It is like {}.", "The same as **{}**.", "Not *{}*.", "Or __{}__."]),
)
def test_a_name_no_tool_printed_never_establishes_an_answer(
    case: tuple[str, str, list[ToolCall], str], name: str, form: str
) -> None:
    """Adding to an answer to a name question a name the tools never printed never
    leaves it established by code (so never turns one that was not into one that is)."""
    request, answer, calls, asked = case
    added = form.format(name)
    assume(name not in _PRINTED and name in named_values(added, request))
    assert _settle(request, "question", answer, calls, asked=asked) == "code"
    assert _settle(request, "question", f"{answer} {added}", calls, asked=asked) != "code"
