"""``artoo audit``: the reports, ``--verify`` against tampering, ``--recompute``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from artoo.cli import build_parser, main
from artoo.demo import SCENARIOS, run_scenario
from artoo.schemas import AuditReport


@pytest.fixture
def store(tmp_path: Path, workspace: Path) -> Path:
    """A store with three sessions (three audit records)."""
    path = tmp_path / "store"
    for scenario in SCENARIOS[:3]:
        run_scenario(scenario, path, workspace)
    return path


def records(store: Path) -> list[bytes]:
    return (store / "audit" / "reports.jsonl").read_bytes().splitlines(keepends=True)


def verify(store: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "artoo.cli", "audit", str(store), "--verify"],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_an_untouched_audit_log_verifies(store: Path) -> None:
    proc = verify(store)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "3 records" in proc.stdout


@pytest.mark.parametrize(
    ("tamper", "first_bad"),
    [
        ("edit", 2),
        ("delete", 2),
        ("delete_last", 3),
        ("swap", 1),
    ],
)
def test_tampering_is_found_at_the_first_bad_record(
    store: Path, tamper: str, first_bad: int
) -> None:
    lines = records(store)
    if tamper == "edit":
        line = bytearray(lines[1])
        at = line.index(b'"envelopes":') + len(b'"envelopes":')
        line[at] = ord("9") if line[at] != ord("9") else ord("8")
        lines[1] = bytes(line)
    elif tamper == "delete":
        del lines[1]
    elif tamper == "delete_last":
        del lines[-1]
    else:
        lines[0], lines[1] = lines[1], lines[0]
    (store / "audit" / "reports.jsonl").write_bytes(b"".join(lines))
    proc = verify(store)
    assert proc.returncode == 1
    assert f"record {first_bad} is bad" in proc.stdout
    assert "Traceback" not in proc.stderr


def test_recompute_agrees_with_the_live_reports(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["audit", str(store), "--recompute"]) == 0
    assert "3 reports: equal" in capsys.readouterr().out
    assert main(["audit", str(store), "--reports"]) == 0
    lines = capsys.readouterr().out.splitlines()
    reports = [msgspec.json.decode(line, type=AuditReport) for line in lines]
    assert [r.tasks_started for r in reports] == [1, 2, 3]
    assert not any(r.complete for r in reports)  # each System wrote its open window


def test_audit_is_listed_in_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert "audit" in build_parser().format_help()
    with pytest.raises(SystemExit):
        main(["audit", "--help"])
    text = capsys.readouterr().out
    assert "--verify" in text and "--recompute" in text and "--format" in text
