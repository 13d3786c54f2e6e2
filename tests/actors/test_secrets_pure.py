"""The scrubbed tool environment and the redactor (pure)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from artoo.actors.tools._secrets import REDACTED, Redactor, secret_values, tool_env

ENV = {
    "PATH": "/usr/bin",
    "HOME": "/home/u",
    "LC_ALL": "C",
    "OPENAI_API_KEY": "sk-1234567890",
    "GITHUB_TOKEN": "ghp_abcdefghij",
    "DB_PASSWORD": "hunter2hunter2",
    "SHORT_KEY": "abc",
    "EDITOR": "vi",
}


def test_a_tool_sees_only_the_allowlist_and_what_the_host_adds() -> None:
    assert tool_env(ENV) == {"PATH": "/usr/bin", "HOME": "/home/u", "LC_ALL": "C"}
    assert tool_env(ENV, allow=["EDITOR"])["EDITOR"] == "vi"


def test_secret_values_are_secret_looking_names_and_extras_longest_first() -> None:
    values = secret_values(ENV, extra=["option-secret-xyz", "short"])
    assert values == ["option-secret-xyz", "ghp_abcdefghij", "hunter2hunter2", "sk-1234567890"]


def test_redaction_replaces_every_occurrence_whole() -> None:
    redact = Redactor(["sk-1234567890", "sk-1234567890-long"])
    text = "a sk-1234567890-long b sk-1234567890 c"
    assert redact(text) == f"a {REDACTED} b {REDACTED} c"
    assert Redactor([])(text) == text


@given(st.text(), st.text(min_size=8).filter(lambda s: "[REDACTED]" not in s))
def test_a_redacted_text_never_contains_the_secret(prefix: str, secret: str) -> None:
    out = Redactor([secret])(prefix + secret + prefix)
    assert secret not in out or secret in REDACTED
