"""A line changed in place read back by the words that changed
(``proof.read_back_by_effect`` with ``in_place``, ``Config.read_back_in_place``): a
removed line and the added line that keeps it (``_lines.pair_lines``: at least 60% alike)
whose words were replaced is read back when every word that changed is a word of the
request, a word gone that is no number (or every word of both lines) locates the line,
and each word gone comes before each word come in the request. Every other line is held
to all its words, as before. The requests and files are the tests' own."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from artoo.actors.verification.proof import read_back_by_effect
from artoo.actors.verification.request import change_word_places, change_words
from artoo.schemas import FileEffect, ToolCall

RENAME = "rename the function shout to yell in src/textutil.py"
WEST = "in prices.csv change the amount of the west region from 800 to 850"
COLOURS = "change red to blue in colors.txt"


def changed(path: str, diff: str, *, in_place: bool = True, request: str = RENAME) -> bool:
    """Whether one sandboxed command that changed ``path`` by ``diff`` reads back as
    ``request``."""
    call = ToolCall(
        tool="shell",
        args={"command": "…"},
        ok=True,
        exit_code=0,
        sandboxed=True,
        effects=(FileEffect(path=path, change="modified", kind="file", diff=diff),),
    )
    return read_back_by_effect(request, [call], in_place=in_place)


def diff(removed: list[str], added: list[str]) -> str:
    return "\n".join([*(f"-{r}" for r in removed), *(f"+{a}" for a in added)])


# --------------------------------------------------------------------------- worked examples
def test_a_rename_is_read_back_by_the_words_that_changed() -> None:
    """``def``, ``text`` and ``str`` are no words of the request: only ``shout`` → ``yell``
    changed. Off, every word of the line must be the request's, as before."""
    renamed = diff(["def shout(text: str) -> str:"], ["def yell(text: str) -> str:"])
    assert changed("src/textutil.py", renamed)
    assert not changed("src/textutil.py", renamed, in_place=False)
    # its call sites renamed too, a line moved aside
    calls = diff(
        ["def shout(text: str) -> str:", "    return shout(x)"],
        ["def yell(text: str) -> str:", "    return yell(x)"],
    )
    assert changed("src/textutil.py", calls)
    # still a file the request names
    assert not changed("src/other.py", renamed)
    # a line less than 60% alike is another line, held to all its words
    assert not changed("src/textutil.py", diff(["def shout(text: str) -> str:"], ["yell = 1"]))


def test_a_rename_that_brings_other_words_is_not_read_back() -> None:
    old = "def shout(text: str) -> str:"
    assert changed("src/textutil.py", diff([old], ["def yell(text: str) -> str:"]))
    for new in (
        "def yell(text: str, loud: bool) -> str:",  # loud, bool: no words of the request
        "def yell(txt: str) -> str:",  # text gone, txt come
        "def shout_yell(text: str) -> str:",  # only come: each line held to all its words
    ):
        assert not changed("src/textutil.py", diff([old], [new])), new
    # a word only gone, none come: held to all its words too
    assert not changed("src/textutil.py", diff(["def shout(text: str, loud: bool):"], [old]))


def test_a_value_alone_does_not_locate_the_line() -> None:
    """The west row's 800 → 850 is read back (every word the request's); the east row's
    is not (800 is a value, no identifier: ``east`` places the line elsewhere); nor is
    the west row's 850 → 800, the request's values the wrong way round."""
    assert changed("prices.csv", diff(["west,800"], ["west,850"]), request=WEST)
    assert not changed("prices.csv", diff(["east,800"], ["east,850"]), request=WEST)
    assert not changed("prices.csv", diff(["west,850"], ["west,800"]), request=WEST)
    # off, the old rule reads the west row back both ways
    assert changed("prices.csv", diff(["west,850"], ["west,800"]), request=WEST, in_place=False)


def test_the_words_gone_come_before_the_words_come_in_the_request() -> None:
    """ "change red to blue" done as red → blue is read back, as blue → red is not."""
    assert changed("colors.txt", diff(["sky: red"], ["sky: blue"]), request=COLOURS)
    assert not changed("colors.txt", diff(["sky: blue"], ["sky: red"]), request=COLOURS)
    assert not changed(
        "colors.txt", diff(["sky: red"], ["sky: blue"]), request=COLOURS, in_place=False
    )


# --------------------------------------------------------------------------- properties
VOCAB = ["shout", "yell", "red", "blue", "west", "east", "800", "850", "def", "text", "x"]
SEPARATORS = [" ", ",", "(", ": ", " = "]

Case = tuple[list[str], list[str], list[str]]


@st.composite
def cases(draw: st.DrawFn) -> Case:
    """A request's words (``in f.txt change …``, each once, in any order) and the lines a
    change of f.txt removed and added: mostly lines changed in place — a word of a
    removed line replaced by another in the added one, each often a word of the request —
    with lines added or removed alone."""
    distinct = st.builds(lambda p, n: p[:n], st.permutations(VOCAB), st.integers(1, len(VOCAB)))
    words = draw(distinct.map(lambda w: w[:7]))
    removed: list[str] = []
    added: list[str] = []
    for old in draw(st.lists(distinct.filter(lambda w: len(w) >= 3), max_size=2)):
        old = old[:5]
        sep = draw(st.sampled_from(SEPARATORS))
        at = draw(st.integers(0, len(old) - 1))
        asked = [w for w in words if w not in old]
        if asked and draw(st.integers(0, 3)):  # mostly a word the request names replaced …
            old[at] = draw(st.sampled_from(asked))
        new = list(old)
        pool = [w for w in (words if draw(st.integers(0, 3)) else VOCAB) if w not in old]
        new[at] = draw(st.sampled_from(pool or [w for w in VOCAB if w not in old]))
        removed.append(sep.join(old))  # … by another
        added.append(sep.join(new))
    vocab = st.sampled_from(words if draw(st.booleans()) else VOCAB)
    alone = st.lists(st.lists(vocab, min_size=1, max_size=3), max_size=1)
    removed += [" ".join(w) for w in draw(alone)]
    added += [" ".join(w) for w in draw(alone)]
    return words, removed, added


def _request(words: list[str]) -> str:
    return f"in f.txt change {' '.join(words)}"


@given(cases())
def test_off_it_is_the_rule_of_all_words(case: Case) -> None:
    """With ``in_place`` off, a diff reads back exactly when every word of every line is
    a word of the request and some line holds a word."""
    words, removed, added = case
    request = _request(words)
    lines = [*removed, *added]
    rule = bool(lines) and all(change_words(x) <= change_words(request) for x in lines)
    assert changed("f.txt", diff(removed, added), in_place=False, request=request) == rule


@settings(max_examples=300)
@given(cases(), st.data())
def test_a_request_with_fewer_words_proves_no_more(case: Case, data: st.DataObject) -> None:
    """Taking a word out of the request never turns a change not read back into one read
    back: the words that changed must be the request's, and those left keep their order."""
    words, removed, added = case
    gone = data.draw(st.sampled_from(words))
    fewer = _request([w for w in words if w != gone])
    if changed("f.txt", diff(removed, added), request=fewer):
        assert changed("f.txt", diff(removed, added), request=_request(words))


@settings(max_examples=300)
@given(cases())
def test_a_line_changed_and_read_back_is_not_read_back_undone(case: Case) -> None:
    """A line changed (one removed, one added) read back though some of its words are not
    the request's was read back in place, in the request's order: undone (the two lines
    swapped), it is not."""
    words, removed, added = case
    request = _request(words)
    removed, added = removed[:1], added[:1]
    if changed("f.txt", diff(removed, added), request=request, in_place=False):
        return  # every word the request's: read back both ways by the rule of all words
    if changed("f.txt", diff(removed, added), request=request):
        assert not changed("f.txt", diff(added, removed), request=request)


@given(st.text(alphabet="ab xyz./,-'", max_size=40))
def test_the_places_are_the_change_words(text: str) -> None:
    """Every change word has a place, the first it is said at."""
    places = change_word_places(text)
    assert set(places) == change_words(text)
    assert all(text.lower().startswith(w, at) for w, at in places.items())
    assert all(text.lower().find(w) <= at for w, at in places.items())
