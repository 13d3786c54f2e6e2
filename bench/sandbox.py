"""What the sandbox costs per shell call (issue: hostile world, "the sandbox's cost per
shell call (median ms) beside a plain subprocess"; issue 41: before and after).

Runs each case ``--calls`` times (default 200) in a scratch workspace of ``--files``
files (default 200) and prints the median, p10 and p90 in milliseconds and the median's
ratio to the baseline measured in the same run:

* ``plain``: ``bash -c CMD`` in its own process group (the runner without a sandbox) —
  the baseline;
* ``sandbox``: the same command in the sandbox (a helper forked by the fork server, its
  tmpfs and overlay, bubblewrap with seccomp, the upper layer observed and released);
* ``registry, parser`` / ``registry, sandbox``: a whole ``ToolRegistry.call("shell")``
  (guards, Law 1 by reading or by effect, spill file) each way;
* ``sandbox, no per-command cgroup``: ``sandbox`` as it runs where this process may make
  no cgroup (its PID namespaces alone end the command) — beside ``sandbox``, what the
  per-command cgroups cost (made, the helper moved in, killed, checked, removed);
* ``sandbox, creating a file``: a command that creates a file (observed and applied).

CMD is ``ls -l`` (reads, changes nothing).

``--pause S`` waits S seconds before each call (untimed), as a model's calls come: a
cgroup v1 move waits for an RCU grace period that back-to-back calls share, so calls
made in a burst understate what each costs alone.

``--vs PYTHON`` compares two installations of artoo in the same run instead — this
interpreter's and ``PYTHON``'s (another checkout's virtual environment, e.g. main's): each
runs this file as a worker, and the driver alternates them call by call (A B, then B A),
case by case, so that both see the same machine; it prints each side's medians, their
ratios to that side's own ``plain``, and the paired median of this side's time over the
other's.

Usage: ``python bench/sandbox.py [--calls 200] [--files 200] [--pause 0] [--json]
[--vs PYTHON]``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

COMMAND = "ls -l"
ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin"}


def _cases(root: Path, files: int) -> list[tuple[str, Callable[[int], object]]]:
    """The cases, in a workspace of ``files`` files under ``root``."""
    from artoo.actors.tools import Sandbox, ToolRegistry
    from artoo.actors.tools._shell import _run_shell

    ws = root / "ws"
    ws.mkdir()
    for i in range(files):
        (ws / f"f{i:04d}.txt").write_text(f"line {i}\n" * 10)
    box = Sandbox()

    def sandboxed(cmd: str) -> None:
        run = box.run(cmd, ws, 30.0, 1_000_000, ENV)
        try:
            run.apply()
        finally:
            run.discard()

    plain_reg = ToolRegistry(ws, root / "spill1")
    box_reg = ToolRegistry(ws, root / "spill2", sandbox=box)
    cases: list[tuple[str, Callable[[int], object]]] = [
        ("plain", lambda i: _run_shell(COMMAND, ws, 30.0, 1_000_000, ENV)),
        ("sandbox", lambda i: sandboxed(COMMAND)),
        ("registry, parser", lambda i: plain_reg.call("shell", {"command": COMMAND})),
        ("registry, sandbox", lambda i: box_reg.call("shell", {"command": COMMAND})),
    ]
    from artoo.actors.tools import _sandbox

    _cgroup = getattr(_sandbox, "_cgroup", None)  # None: from before per-command cgroups
    if _cgroup is not None:

        def without_cgroups(cmd: str) -> None:
            saved = _cgroup.usable()
            _cgroup._discovered = []
            try:
                sandboxed(cmd)
            finally:
                _cgroup._discovered = saved

        cases.append(("sandbox, no per-command cgroup", lambda i: without_cgroups(COMMAND)))
    cases.append(("sandbox, creating a file", lambda i: sandboxed(f"echo {i} > new_{i + 2}.txt")))
    return cases


def _times(fn: Callable[[int], object], n: int, pause: float) -> list[float]:
    fn(-1)  # warm up
    out = []
    for i in range(n):
        time.sleep(pause)
        start = time.perf_counter()
        fn(i)
        out.append((time.perf_counter() - start) * 1000.0)
    return out


def _worker(files: int) -> int:
    """Serve the driver of ``--vs``: a case name per line in, its milliseconds out."""
    root = Path(tempfile.mkdtemp(prefix="artoo-bench-sandbox-"))
    try:
        cases = dict(_cases(root, files))
        for i, fn in enumerate(cases.values()):
            fn(-1 - i)  # warm up
        print(json.dumps(list(cases)), flush=True)
        for n, line in enumerate(sys.stdin):
            start = time.perf_counter()
            cases[line.strip()](n)
            print((time.perf_counter() - start) * 1000.0, flush=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


def _summary(times: dict[str, list[float]]) -> dict[str, dict[str, float]]:
    base = statistics.median(times["plain"])
    out = {}
    for name, t in times.items():
        q = statistics.quantiles(t, n=10)
        median = statistics.median(t)
        out[name] = {"median_ms": median, "p10_ms": q[0], "p90_ms": q[-1], "ratio": median / base}
    return out


def _print(title: str, results: dict[str, dict[str, float]]) -> None:
    print(title)
    print(f"{'case':<32} {'median ms':>10} {'p10':>8} {'p90':>8} {'× plain':>8}")
    for name, r in results.items():
        print(
            f"{name:<32} {r['median_ms']:>10.1f} {r['p10_ms']:>8.1f} "
            f"{r['p90_ms']:>8.1f} {r['ratio']:>8.1f}"
        )


def _versus(other: str, calls: int, files: int, pause: float) -> dict[str, object]:
    """Both installations, call by call (see the module docstring)."""
    here = Path(__file__).resolve()
    sides = {"this": sys.executable, "other": other}
    workers = {
        side: subprocess.Popen(
            [python, str(here), "--worker", "--files", str(files)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=tempfile.gettempdir(),  # not a checkout: each imports its own install
        )
        for side, python in sides.items()
    }
    names = {side: json.loads(w.stdout.readline() or "[]") for side, w in workers.items()}
    shared = [c for c in names["this"] if c in names["other"]]
    times: dict[str, dict[str, list[float]]] = {side: {} for side in sides}
    try:
        for i in range(calls):
            for case in shared:
                for side in ("this", "other") if i % 2 == 0 else ("other", "this"):
                    worker = workers[side]
                    assert worker.stdin is not None and worker.stdout is not None
                    time.sleep(pause)
                    worker.stdin.write(case + "\n")
                    worker.stdin.flush()
                    times[side].setdefault(case, []).append(float(worker.stdout.readline()))
    finally:
        for worker in workers.values():
            if worker.stdin is not None:
                worker.stdin.close()
            worker.wait()
    paired = {
        case: statistics.median(
            a / b for a, b in zip(times["this"][case], times["other"][case], strict=True)
        )
        for case in shared
    }
    return {"this": _summary(times["this"]), "other": _summary(times["other"]), "paired": paired}


def main(argv: list[str] | None = None) -> int:
    """Run the bench; print the figures (the last line is JSON with ``--json``)."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--pause", type=float, default=0.0, help="seconds before each call")
    parser.add_argument("--vs", metavar="PYTHON", help="another installation's interpreter")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return _worker(args.files)
    from artoo.actors.tools import probe

    why = probe()
    if why is not None:
        print(f"no sandbox on this machine: {why}")
        return 1
    head = f"{args.calls} calls each, workspace of {args.files} files, command {COMMAND!r}"
    head += f", {args.pause:g} s before each call" if args.pause else ""
    if args.vs:
        result = _versus(args.vs, args.calls, args.files, args.pause)
        print(head + ", the two installations call by call")
        _print(f"this: {sys.executable}", result["this"])  # type: ignore[arg-type]
        _print(f"other: {args.vs}", result["other"])  # type: ignore[arg-type]
        print("this / other, paired median per case:")
        for case, ratio in result["paired"].items():  # type: ignore[attr-defined]
            print(f"  {case:<32} {ratio:.2f}")
        if args.json:
            print(json.dumps(result))
        return 0
    root = Path(tempfile.mkdtemp(prefix="artoo-bench-sandbox-"))
    try:
        cases = _cases(root, args.files)
        results = _summary({name: _times(fn, args.calls, args.pause) for name, fn in cases})
        _print(head, results)
        if args.json:
            print(json.dumps(results))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
