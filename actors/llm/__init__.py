r"""The LLM gateway: one narrow seam between the roles and any model, with three backends.

Every role that asks a model builds an :class:`LLMRequest` and hands it to an
:class:`LLMGateway`, which picks the backend of the request's tier, measures the call,
hands it to a recorder as an :class:`~artoo.schemas.LLMCall` (also when it fails) and returns an
:class:`LLMResponse` or raises :class:`LLMError`. A backend is anything with
``complete(request) -> LLMResponse`` (:class:`LLMBackend`):

- :class:`LitellmBackend` — any litellm model string (``openai/gpt-4o-mini``,
  ``ollama/llama3``, …). litellm is imported lazily, on the first call, so importing
  artoo never pays for it.
- :class:`ScriptedBackend` — model string ``scripted:<path>``: answers from a TOML
  script, deterministically, with no network and no key (tests, ``artoo demo``).
- :class:`ReplayBackend` — serves the LLMCalls of a recorded run, for ``replay --rerun``.

Tiers
-----
The ``brain`` tier (Perceiver, Planner, Meta-Validator, Dreamer, the Judge's model
rung) and the ``tool`` tier (Executor, Agent-Validator) may use different models.
:func:`resolve_models` decides each tier's model; the first that is set wins::

    brain: config.brain_model, config.model, $ARTOO_BRAIN_MODEL, $ARTOO_MODEL
    tool:  config.tool_model,  config.model, $ARTOO_TOOL_MODEL,  $ARTOO_MODEL

Explicit configuration (``System.open(..., model=...)``, ``--model``) beats the
environment, so a forgotten ``ARTOO_BRAIN_MODEL`` never overrides what the program asked
for. An empty string counts as unset. Nothing set anywhere raises :class:`ModelNotConfigured`.

Structured answers
------------------
:func:`ask_structured` asks for one JSON object of a msgspec Struct type: the JSON schema
goes into ``request.response_schema`` (sent natively where the model supports it) and into
the system prompt; the answer is parsed with msgspec (fences and prose around the object
are tolerated); an invalid answer gets ONE repair turn quoting the validation error; then
the result is a clean failure (``ok=False``), never an invented value.

Script format (``scripted:<path>``)
-----------------------------------
A script is a TOML file of ``[[response]]`` entries::

    [[response]]
    role = "perceiver"                 # required: the role this entry answers
    content = { intent = "count the python files", slug = "count-python-files" }

    [[response]]
    role = "executor"
    match = "count .*python"           # optional regex (Python re.search)
    tool_calls = [{ name = "shell", arguments = { command = "ls src/*.py | wc -l" } }]

    [[response]]
    role = "executor"
    match = '(?m)^12$'                 # a later turn matches on the tool's output
    content = "There are 12 python files."
    times = 1                          # uses allowed (default 1; 0 = unlimited)
    usage = { prompt_tokens = 10, completion_tokens = 5 }   # optional
    delay_ms = 200                     # optional simulated model latency

Keys of an entry:

``role`` (required)
    The role name the entry answers (``perceiver``, ``planner``, ``executor``, …).
``match``
    A regular expression searched (``re.search``) in the request's text: the contents of
    all its messages joined by newlines, system prompt and tool results included. No
    ``match`` matches every request of the role.
``content``
    The text answer. A TOML table or array is sent as its JSON encoding, so a structured
    answer can be written as ``content = { intent = "count files", slug = "count" }``.
``tool_calls``
    Tool calls the model makes: an array of ``{ name = "...", arguments = {...} }``
    (``id`` optional; default ``call_<entry>_<use>_<k>``: the entry's position in the
    file, its use number and the call's position in the answer, all counted from 1).
    An entry needs ``content`` or ``tool_calls`` or both.
``times``
    How many requests the entry may answer (default 1); ``0`` means unlimited.
``usage``
    ``{ prompt_tokens, completion_tokens }``; default: about one token per 4 characters
    of the request and of the answer.
``delay_ms``
    Simulated latency of this entry; default the backend's ``latency_ms`` (0).

Selection: a request is answered by the FIRST entry, in file order, whose ``role`` is the
request's role, that still has uses left, and whose ``match`` (if any) matches. Selection
and the use count update happen under one lock, so parallel subtasks whose requests
differ in text (give each entry a ``match`` on its subtask's instruction) get their own
answers whatever the thread timing. No entry left is an error (``script exhausted for
role executor …``), which the role handles like any model failure. Unknown keys are an
error, so a typo never silently changes a script.
"""

from __future__ import annotations

from ._budget import BudgetSpent, TaskBudgets, TaskStopped
from ._gateway import LLMGateway
from ._litellm import LitellmBackend, model_problem
from ._replay import ReplayBackend
from ._resolve import backend_options, resolve_backend, resolve_models
from ._scripted import ScriptedBackend, ScriptEntry, ScriptToolCall
from ._structured import ask_structured
from ._types import (
    ROLE_TIERS,
    TIERS,
    LLMBackend,
    LLMError,
    LLMRequest,
    LLMResponse,
    ModelNotConfigured,
    ScriptError,
    StructuredAnswer,
    ToolCallRequest,
    assistant_message,
    json_objects,
    request_text,
    schema_instruction,
    tool_message,
)

__all__ = [
    "ROLE_TIERS",
    "TIERS",
    "BudgetSpent",
    "LLMBackend",
    "LLMError",
    "LLMGateway",
    "LLMRequest",
    "LLMResponse",
    "LitellmBackend",
    "ModelNotConfigured",
    "ReplayBackend",
    "ScriptEntry",
    "ScriptError",
    "ScriptToolCall",
    "ScriptedBackend",
    "StructuredAnswer",
    "TaskBudgets",
    "TaskStopped",
    "ToolCallRequest",
    "ask_structured",
    "assistant_message",
    "backend_options",
    "json_objects",
    "model_problem",
    "request_text",
    "resolve_backend",
    "resolve_models",
    "schema_instruction",
    "tool_message",
]
