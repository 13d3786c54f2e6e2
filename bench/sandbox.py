"""What the sandbox costs per shell call (issue: hostile world, "the sandbox's cost per
shell call (median ms) beside a plain subprocess").

Runs each case ``--calls`` times (default 200) in a scratch workspace of ``--files``
files (default 200) and prints the median, p10 and p90 in milliseconds and the median's
ratio to the baseline measured in the same run:

* ``plain``: ``bash -c CMD`` in its own process group (the runner without a sandbox) —
  the baseline;
* ``sandbox``: the same command in the sandbox (a helper forked by the fork server, its
  tmpfs and overlay, bubblewrap with seccomp, the upper layer observed and released);
* ``registry, parser`` / ``registry, sandbox``: a whole ``ToolRegistry.call("shell")``
  (guards, Law 1 by reading or by effect, spill file) each way.

CMD is ``ls -l`` (reads, changes nothing). ``--write`` adds a case whose command creates
a file (observed and applied).

Usage: ``python bench/sandbox.py [--calls 200] [--files 200] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from artoo.actors.tools import Sandbox, ToolRegistry, probe
from artoo.actors.tools._shell import _run_shell

COMMAND = "ls -l"


def _times(fn: Callable[[int], object], n: int) -> list[float]:
    fn(-1)  # warm up
    out = []
    for i in range(n):
        start = time.perf_counter()
        fn(i)
        out.append((time.perf_counter() - start) * 1000.0)
    return out


def main(argv: list[str] | None = None) -> int:
    """Run the bench; print the figures (the last line is JSON with ``--json``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    why = probe()
    if why is not None:
        print(f"no sandbox on this machine: {why}")
        return 1
    root = Path(tempfile.mkdtemp(prefix="artoo-bench-sandbox-"))
    try:
        ws = root / "ws"
        ws.mkdir()
        for i in range(args.files):
            (ws / f"f{i:04d}.txt").write_text(f"line {i}\n" * 10)
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin"}
        box = Sandbox()

        def sandboxed(cmd: str) -> None:
            run = box.run(cmd, ws, 30.0, 1_000_000, env)
            try:
                run.apply()
            finally:
                run.discard()

        plain_reg = ToolRegistry(ws, root / "spill1")
        box_reg = ToolRegistry(ws, root / "spill2", sandbox=box)
        cases: list[tuple[str, Callable[[int], object]]] = [
            ("plain", lambda i: _run_shell(COMMAND, ws, 30.0, 1_000_000, env)),
            ("sandbox", lambda i: sandboxed(COMMAND)),
            ("registry, parser", lambda i: plain_reg.call("shell", {"command": COMMAND})),
            ("registry, sandbox", lambda i: box_reg.call("shell", {"command": COMMAND})),
            ("sandbox, creating a file", lambda i: sandboxed(f"echo {i} > new_{i + 1}.txt")),
        ]
        results = {}
        for name, fn in cases:
            t = _times(fn, args.calls)
            q = statistics.quantiles(t, n=10)
            results[name] = {"median_ms": statistics.median(t), "p10_ms": q[0], "p90_ms": q[-1]}
        base = results["plain"]["median_ms"]
        print(f"{args.calls} calls each, workspace of {args.files} files, command {COMMAND!r}")
        print(f"{'case':<28} {'median ms':>10} {'p10':>8} {'p90':>8} {'× plain':>8}")
        for name, r in results.items():
            r["ratio"] = r["median_ms"] / base
            print(
                f"{name:<28} {r['median_ms']:>10.1f} {r['p10_ms']:>8.1f} "
                f"{r['p90_ms']:>8.1f} {r['ratio']:>8.1f}"
            )
        if args.json:
            print(json.dumps(results))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
