"""A hostile check cannot freeze the process: a model-chosen (a+)+$ runs on RE2."""

from __future__ import annotations

import itertools
import threading
import time
from pathlib import Path

import artoo
from artoo.testing import write_script

from .helpers import CONFIG


def test_a_catastrophic_check_on_a_long_output_freezes_nothing(
    tmp_path: Path, workspace: Path
) -> None:
    crit = [
        {
            "text": "ends in a run of a's",
            "mode": "verifiable",
            "check": {"kind": "output_matches", "value": "(a+)+$"},
        }
    ]
    entries = [
        {"role": "perceiver", "times": 0, "content": {"intent": "a", "slug": "a"}},
        {
            "role": "planner",
            "times": 0,
            "content": {"subtasks": [{"instruction": "Say a lot of a", "criteria": crit}]},
        },
        {"role": "executor", "times": 0, "content": "a" * 5000 + "!"},
    ]
    beats: list[float] = []
    stop = threading.Event()

    def heartbeat() -> None:
        while not stop.is_set():
            beats.append(time.monotonic())
            time.sleep(0.01)

    ticker = threading.Thread(target=heartbeat, daemon=True)
    ticker.start()
    started = time.monotonic()
    with artoo.System.open(
        tmp_path / "s", model=write_script(tmp_path / "s.toml", entries), workspace=workspace,
        config=CONFIG,
    ) as system:  # fmt: skip
        result = system.run("say a lot of a", timeout=2)
    took = time.monotonic() - started
    stop.set()
    ticker.join(1)
    assert result.status == "abandon"  # the check never matches: no hang, an honest end
    assert took < 3.0, f"the task took {took:.1f} s"
    gaps = [b - a for a, b in itertools.pairwise(beats)]
    assert max(gaps) < 1.0  # the heartbeat thread was never starved
