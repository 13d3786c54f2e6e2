"""The terminal shows model and tool text as written, and refuses nonsense inputs."""

from __future__ import annotations

from pathlib import Path

import pytest

from artoo.cli import literal, main
from artoo.testing import write_script

from .helpers import PERCEIVE

HOSTILE = "done [/bold] [link=http://evil.example]click[/link] \x1b[31mred\x1b[0m \x07"


def test_model_text_with_markup_and_escapes_is_printed_literally(
    tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = write_script(
        tmp_path / "s.toml",
        [PERCEIVE, {"role": "executor", "times": 0, "content": HOSTILE}],
    )
    code = main(
        ["run", "hello", "--store", str(tmp_path / "s"), "--model", model,
         "--workspace", str(workspace)]
    )  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0  # a success (a free-text answer), not a crash on "[/bold]"
    assert "[/bold]" in out and "[link=http://evil.example]click[/link]" in out
    assert "\x1b" not in out and "\x07" not in out
    assert "\\x1b[31mred\\x1b[0m" in out and "\\x07" in out


def test_literal_keeps_newlines_and_tabs_and_escapes_other_controls() -> None:
    assert literal("a\tb\nc\x00d\x9b").plain == "a\tb\nc\\x00d\\x9b"


@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "-5", "0", "soon"])
def test_a_timeout_must_be_positive_and_finite(
    value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["run", "hello", "--timeout", value])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "--timeout" in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("config", "field"),
    [
        ({"max_parallel": "4"}, "max_parallel"),
        ({"max_retries": True}, "max_retries"),
        ({"task_timeout_s": float("inf")}, "task_timeout_s"),
        ({"confirmation_timeout_s": float("nan")}, "confirmation_timeout_s"),
        ({"ggs": {"alpha": "0.5"}}, "ggs.alpha"),
        ({"max_parallel": 10_000}, "max_parallel"),
    ],
)
def test_a_bad_configuration_is_one_line_naming_the_field(
    tmp_path: Path, config: dict[str, object], field: str
) -> None:
    import artoo

    with pytest.raises(ValueError, match=f"invalid configuration: {field}: ") as exc:
        artoo.System.open(tmp_path / "s", model="scripted:x", config=config)
    assert "\n" not in str(exc.value)
    assert not (tmp_path / "s").exists()  # nothing was created


@pytest.mark.parametrize("deadline", [float("inf"), float("nan"), -5.0, 0.0])
def test_a_deadline_must_be_positive_and_finite(
    tmp_path: Path, workspace: Path, deadline: float
) -> None:
    import artoo

    model = write_script(tmp_path / "s.toml", [PERCEIVE])
    with artoo.System.open(tmp_path / "s", model=model, workspace=workspace) as system:
        with pytest.raises(ValueError, match="positive, finite"):
            system.submit("hello", timeout=deadline)
