"""A value computed by running the request's own code proves a question's answer
(``Config.proof_by_evaluation``; ``actors/verification/_evaluation.py``).

Failure class: "what does <call> return?" answered right by reading the source and, at
best, running the call once ended ``success``: one command's word is one derivation, and
a second asked for in a fresh conversation rarely came (the source read again prints no
value). Now a ``shell`` call that imports only from a Python file the request names and
prints one expression of the request's own names and constants — the call it writes,
when it writes one — is code computing the value, and an answer stating what it printed
is proven by it; nothing else is. Requests, files and values are the tests' own.
"""

from __future__ import annotations

import string

from hypothesis import given
from hypothesis import strategies as st

from artoo.actors.verification._evaluation import (
    evaluated,
    evaluates,
    evaluation_command,
    literal_calls,
)
from artoo.actors.verification.proof import (
    Corroboration,
    established,
    established_and_note,
    needs_second_derivation,
)
from artoo.schemas import SubTaskOutcome, ToolCall, Verdict

from .proof_helpers import read_call as _read
from .proof_helpers import settle as _settle
from .proof_helpers import shell_call as _shell

PRICE = "what does fmt_price(12) in lib/money.py return?"
PRICE_RUN = _shell(
    "cd lib && python3 -c 'from money import fmt_price; print(fmt_price(12))'", "$12.00\n"
)
TITLE = 'what does title in lib/words.py return when called with "ada lovelace"?'
TITLE_RUN = _shell(
    "python3 -c 'from lib.words import title; print(title(\"ada lovelace\"))'", "Ada Lovelace\n"
)
VOLUME = "what does Box(2).volume() return, with Box from geo/solids.py?"
VOLUME_RUN = _shell("python -c 'import geo.solids; print(geo.solids.Box(2).volume())'", "8\n")
HELLO = "what does tools/hello.py print when it runs?"
HELLO_RUN = _shell("python3 tools/hello.py", "hi there\nbye\n")
RATE = "what is the value of TAX_RATE in billing/rates.py?"
RATE_RUN = _shell("cd billing && python3 -c 'import rates; print(rates.TAX_RATE)'", "0.2\n")
SOURCE = "def fmt_price(cents):\n    return f'${cents:.2f}'\n"


def _no_evaluation(request: str, output: str, calls: list[ToolCall]) -> str | None:
    verdicts = [Verdict(criterion_id="request", passed=True)]
    return established(
        request=request,
        kind="question",
        criteria={},
        task_verdicts=verdicts,
        outcomes=[SubTaskOutcome(subtask_id="s", output=output, tool_calls=calls)],
        output=output,
        evaluation=False,
    )


def test_a_value_the_requests_own_code_printed_is_proof() -> None:
    """Each form — a call the request writes, a function called with the text it quotes,
    an attribute chain through an imported package, a named constant, a script run —
    proves the answer stating what it printed; the same call without the rule is one
    derivation, and the answer rests on the model (the failure class)."""
    for request, run, answer in (
        (PRICE, PRICE_RUN, "fmt_price(12) returns $12.00."),
        (TITLE, TITLE_RUN, 'It returns "Ada Lovelace".'),
        (VOLUME, VOLUME_RUN, "Box(2).volume() returns 8."),
        (HELLO, HELLO_RUN, "It prints hi there, then bye."),
        (RATE, RATE_RUN, "TAX_RATE is 0.2."),
    ):
        assert evaluates(run, request), run.args
        assert _settle(request, "question", answer, [run]) == "code", request
        assert _no_evaluation(request, answer, [run]) == "model", request


def test_booleans_are_read_in_any_case() -> None:
    request = "what does is_leap(1900) in cal/years.py return?"
    run = _shell("cd cal && python3 -c 'from years import *; print(is_leap(1900))'", "False\n")
    assert _settle(request, "question", "is_leap(1900) returns false.", [run]) == "code"
    assert _settle(request, "question", "It returns true.", [run]) == "model"


def test_an_answer_that_does_not_state_what_was_printed_is_not_proven() -> None:
    assert _settle(PRICE, "question", "fmt_price(12) returns 12.", [PRICE_RUN]) == "model"
    assert _settle(HELLO, "question", "It prints hi there.", [HELLO_RUN]) == "model"


def test_code_that_computes_something_else_is_no_evaluation() -> None:
    """Another argument, another call, a printed constant, code beyond one import and one
    print, an import from a file the request does not name, a module run for a question
    about one of its functions: none evaluates the request."""
    for request, command in (
        (TITLE, "python3 -c 'from lib.words import title; print(title(\"lib\"))'"),
        (PRICE, "cd lib && python3 -c 'from money import fmt_price; print(fmt_price(13))'"),
        (PRICE, "cd lib && python3 -c 'from money import fmt_price; print(fmt_price(12) + 1)'"),
        (PRICE, "python3 -c 'print(\"$12.00\")'"),
        (PRICE, "cd lib && python3 -c 'from money import *; x = fmt_price(12); print(x)'"),
        (PRICE, "cd lib && python3 -c 'from other import fmt_price; print(fmt_price(12))'"),
        (PRICE, "cd lib && python3 -c 'import os; print(os.getcwd())'"),
        (PRICE, "cd lib && python3 -c 'from money import fmt_price as f; print(f(12))'"),
        (PRICE, "python3 lib/money.py"),
        (TITLE, "python3 lib/words.py"),
        (VOLUME, "python -c 'import geo.solids; print(geo.solids.Box(3).volume())'"),
        (HELLO, "python3 tools/hello.py --loud"),
        (HELLO, "python3 tools/other.py"),
    ):
        run = _shell(command, "$12.00\n")
        assert not evaluates(run, request), command
        assert _settle(request, "question", "It is $12.00.", [run]) == "model", command


def test_a_run_that_failed_or_was_redirected_is_no_evaluation() -> None:
    command = PRICE_RUN.args["command"]
    for run in (
        _shell(command, "$12.00\n", exit_code=1),
        _shell(command, "$12.00\n", stderr="DeprecationWarning: old\n"),
        _shell(f"{command} > out.txt", "$12.00\n"),
        _shell(f"{command}; rm -rf lib", "$12.00\n"),
        _shell(command, ""),
    ):
        assert not evaluates(run, PRICE), run.args
    assert not evaluated("$12.00", [_shell(command, "$12.00\n", exit_code=1)], PRICE)


def test_a_long_print_is_no_value() -> None:
    dump = "".join(f"line {i}\n" for i in range(8))
    run = _shell("python3 tools/hello.py", dump)
    assert evaluates(run, HELLO)
    assert not evaluated(dump, [run], HELLO)


@given(st.text(alphabet=string.ascii_letters + " ", min_size=1, max_size=12))
def test_no_string_the_request_does_not_quote_evaluates_it(text: str) -> None:
    """A string argument is the request's only when the request quotes it."""
    run = _shell(
        f"python3 -c 'from lib.words import title; print(title(\"{text}\"))'", text.title() + "\n"
    )
    if text == "ada lovelace":
        return
    assert not evaluates(run, TITLE)


def test_an_evaluation_asks_for_no_second_derivation_and_names_itself() -> None:
    """Proven by one run, the answer is not sent back for another derivation (a model
    call saved); the verdict says which call evaluated the request."""
    assert (
        needs_second_derivation(
            request=PRICE,
            kind="question",
            criteria={},
            verdicts=[Verdict(criterion_id="done", passed=True)],
            calls=[PRICE_RUN],
            output="It returns $12.00.",
        )
        is None
    )
    found, note = established_and_note(
        request=HELLO,
        kind="question",
        criteria={},
        task_verdicts=[Verdict(criterion_id="request", passed=True)],
        outcomes=[SubTaskOutcome(subtask_id="s", output="hi there, bye", tool_calls=[HELLO_RUN])],
        output="hi there, bye",
    )
    assert found == "code"
    assert note == "evaluated: `python3 tools/hello.py` printed hi there bye"


def test_a_value_worked_out_from_the_source_is_told_the_exact_command() -> None:
    """Read off the source, ``$12.00`` is no tool's output: the ask gives the command
    that evaluates the request, runnable as it stands."""

    def asked(evaluation: bool) -> Corroboration | None:
        return needs_second_derivation(
            request=PRICE,
            kind="question",
            criteria={},
            verdicts=[Verdict(criterion_id="done", passed=True)],
            calls=[_read("lib/money.py", SOURCE)],
            output="fmt_price(12) returns `$12.00`.",
            evaluation=evaluation,
        )

    ask = asked(True)
    assert ask is not None and ask.unbacked
    command = "cd lib && python3 -c 'from money import *; print(fmt_price(12))'"
    assert ask.command == command
    assert command in ask.feedback()
    # the command it gives is one the rule takes
    assert evaluates(_shell(command, "$12.00\n"), PRICE)
    off = asked(False)
    assert off is not None and off.command == "" and "Compute it" in off.feedback()


def test_evaluation_command() -> None:
    assert evaluation_command('what does upper("ok") in lib/s.py return?') == (
        "cd lib && python3 -c \"from s import *; print(upper('ok'))\""
    )
    assert evaluation_command(HELLO) == "python3 tools/hello.py"
    assert evaluation_command("what does run() in main.py return?") == (
        "python3 -c 'from main import *; print(run())'"
    )
    assert evaluation_command(TITLE) is None  # no call written: code cannot write it
    assert evaluation_command("what does f(1) in a.py and g(2) in b.py return?") is None
    assert evaluation_command("how many lines are in notes.txt?") is None


def test_literal_calls() -> None:
    import ast

    shown = [ast.unparse(c) for c in literal_calls('does Box(2).volume() match fmt("a (b)")?')]
    assert shown == ["Box(2).volume()", "fmt('a (b)')"]
    assert literal_calls("what does it return (if anything)?") == []


def test_a_return_question_with_no_call_written_is_told_where_the_call_goes() -> None:
    """Code cannot write ``title("ada lovelace")`` from the English around it; the ask
    gives the command with ``…`` for the call, which, run as it stands, proves nothing."""
    ask = needs_second_derivation(
        request=TITLE,
        kind="question",
        criteria={},
        verdicts=[Verdict(criterion_id="done", passed=True)],
        calls=[_read("lib/words.py", "def title(s):\n    return s.title()\n")],
        output='It returns "Ada Lovelace", as `title` capitalises each word.',
    )
    assert ask is not None and ask.unbacked and ask.command == ""
    assert ask.pattern == "cd lib && python3 -c 'from words import *; print(…)'"
    assert ask.pattern in ask.feedback()
    assert not evaluates(_shell(ask.pattern, "x\n"), TITLE)


def test_first_evaluation_is_only_for_the_request_itself_as_a_question() -> None:
    from artoo.actors.roles.executor import first_evaluation
    from artoo.schemas import SubTask

    def sub(instruction: str, request: str) -> SubTask:
        return SubTask(subtask_id="s", instruction=instruction, request=request)

    command = "cd lib && python3 -c 'from money import *; print(fmt_price(12))'"
    assert first_evaluation(sub(PRICE, PRICE)) == command
    assert first_evaluation(sub("work out the price", PRICE)) == ""  # a planned subtask
    assert first_evaluation(sub(TITLE, TITLE)) == ""  # no call written: none to run
    change = "make fmt_price(12) in lib/money.py return 12"
    assert first_evaluation(sub(change, change)) == ""  # no question
    assert first_evaluation(sub(HELLO, HELLO)) == "python3 tools/hello.py"


def test_an_answer_loses_the_tool_markup_it_echoed() -> None:
    from artoo.actors.roles.executor import answer_text

    echoed = "HI! <tool_response> exit code: 0 --- stdout --- HI! </tool_response>"
    assert answer_text(echoed) == "HI!"
    assert answer_text('It is 4.\n<tool_call>\n{"name": "shell"') == "It is 4."
    assert answer_text("a </tool_response> b") == "a   b"
    plain = "x < y and <b>bold</b> stay"
    assert answer_text(plain) == plain


def test_an_evaluation_reads_the_python_file_the_request_names() -> None:
    """Read as a change (the model's kind), the question is held to both readings: a file
    it names that no call read makes it unproven — but the call that evaluated it
    imported that file. Without the rule, the same run is "untouched"."""
    request = "what does port() in conf/net.py return?"
    run = _shell("cd conf && python3 -c 'from net import *; print(port())'", "8443\n")
    assert _settle(request, "change", "It returns 8443.", [run]) == "code"
    verdicts = [Verdict(criterion_id="request", passed=True)]
    outcome = SubTaskOutcome(subtask_id="s", output="It returns 8443.", tool_calls=[run])
    off = established(
        request=request,
        kind="change",
        criteria={},
        task_verdicts=verdicts,
        outcomes=[outcome],
        output="It returns 8443.",
        evaluation=False,
    )
    assert off == "model"
    # a file it names that is no Python file is still to be read
    both = "what does port() in conf/net.py return, as docs/ports.md says?"
    assert _settle(both, "change", "It returns 8443.", [run]) == "model"
