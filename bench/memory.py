"""Benchmark of the MegramStore and the Dreamer pass (issue 3).

For each size (default 10⁴, 10⁵, 10⁶ megrams over 10⁴ tags) it fills a fresh store
with GGS-like megrams (the paper's quantization matrix, ages up to 60 days, a few C-level
rules) and measures, beside a plain-Python loop over the same data in the same run:

- ``query_mk`` latency p50/p99 over random tags, against (a) a Python loop over the tag's
  Megrams held in a dict, and (b) the paper's LevelDB path (scan ``x|<space>|<entity>|``,
  read and decode each ``m|<id>``, loop);
- ``strongest("tool:", "avoid", 10)`` latency against a Python loop over every Megram;
- one Dreamer pass (``plan_pass``: the plan over every megram, the events, and the
  sources of the clusters it returns for distillation) against the same rules as Python
  loops over Megrams (which only count);
- fill rate (``apply_many``) and reopen time.

Usage: ``python bench/memory.py [--sizes 10000,100000,1000000] [--pairs 10000] [--json]``.
With ``--json`` the last line printed is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from artoo.actors.roles.dreamer import ConsolidationCandidate, plan_columns, plan_pass
from artoo.eventstore.megrams import MegramStore, action
from artoo.schemas import Megram, MegramRecorded, SOPPromoted

T0 = 1_700_000_000.0
DAY = 86_400.0
MATRIX = [  # state, f, sigma, k, weight
    ("abandon", 0.95, -1.0, 0.05, 1),
    ("accept", 0.90, 1.0, 0.05, 2),
    ("change_approach", 0.85, -1.0, 0.05, 1),
    ("success", 0.80, 1.0, 0.05, 2),
    ("break_symmetry", 0.75, 1.0, 0.05, 1),
    ("change_path", 0.30, 0.0, 0.2, 2),
    ("refine", 0.10, 0.5, 0.5, 2),
]


# --------------------------------------------------------------------------- data
def make_tags(n_tags: int) -> list[tuple[str, str]]:
    """Half tool-space tags (micro-events), half intent tags (macro-events)."""
    half = n_tags // 2
    tools = [(f"tool:t{i % 50}", f"path:/data/{i}") for i in range(half)]
    intents = [(f"intent:task-{i}", "env:local") for i in range(n_tags - half)]
    return tools + intents


def make_events(n: int, tags: list[tuple[str, str]], seed: int) -> list[Any]:
    """``n`` M-level megrams plus one C-level rule per 200 (each consolidating 3 sources)."""
    rng = np.random.default_rng(seed)
    weights = np.array([w for *_, w in MATRIX], dtype=float)
    states = rng.choice(len(MATRIX), size=n, p=weights / weights.sum())
    tag = rng.integers(0, len(tags), size=n)
    created = T0 - rng.uniform(0, 60, size=n) * DAY
    events: list[Any] = []
    for i in range(n):
        state, f, sigma, k, _ = MATRIX[states[i]]
        space, entity = tags[tag[i]]
        m = Megram(
            id=f"m{i:08d}",
            level="M",
            created_at=float(created[i]),
            space=space,
            entity=entity,
            content=state,
            state=state,
            f=f,
            sigma=sigma,
            k=k,
        )
        events.append(MegramRecorded(megram=m))
        if i % 200 == 199:
            sources = [f"m{j:08d}" for j in range(i - 2, i + 1)]
            rule = Megram(
                id=f"c{i:08d}",
                level="C",
                created_at=float(T0 - rng.uniform(0, 30) * DAY),
                space=space,
                entity=entity,
                content="rule",
                state="best_practice" if sigma >= 0 else "constraint",
                f=0.9,
                sigma=1.0 if sigma >= 0 else -1.0,
                k=0.0,
            )
            events.append(SOPPromoted(megram=rule, source_ids=sources))
    return events


# --------------------------------------------------------------------------- python baselines
def py_query(ms: list[Megram], now: float) -> tuple[float, float, str]:
    """The potentials of one tag as a plain loop."""
    att = dec = 0.0
    for m in ms:
        if m.level not in ("M", "K"):
            continue
        ref = m.created_at if m.last_recalled_at is None else max(m.created_at, m.last_recalled_at)
        g = math.exp(-m.k * max(0.0, now - ref) / DAY)
        att += abs(m.f) * g
        dec += m.sigma * m.f * g
    return att, dec, action(att, dec)


def leveldb_query(db: Any, space: str, entity: str, now: float) -> tuple[float, float, str]:
    """The paper's path: scan the inverted index, read and decode each megram, loop."""
    import msgspec

    decoder = msgspec.msgpack.Decoder(Megram)
    prefix = b"x|" + space.encode() + b"|" + entity.encode() + b"|"
    ms = []
    for key in db.iterator(prefix=prefix, include_value=False):
        raw = db.get(b"m|" + key[len(prefix) :])
        if raw is not None:
            ms.append(decoder.decode(raw))
    return py_query(ms, now)


def py_strongest(by_tag: dict[tuple[str, str], list[Megram]], now: float) -> list[tuple]:
    found = []
    for (space, entity), ms in by_tag.items():
        if not space.startswith("tool:"):
            continue
        att, _, act = py_query(ms, now)
        if act == "avoid" and any(m.level in ("M", "K") for m in ms):
            found.append((-att, space, entity))
    return sorted(found)[:10]


def py_pass(megrams: list[Megram], consolidated: set[str], now: float) -> tuple[int, int, int]:
    """The Dreamer's rules as plain loops: (forgotten, demoted, candidates)."""
    forget: set[str] = set()
    evidence: dict[tuple[str, str], list[tuple[float, float, float]]] = defaultdict(list)
    pool: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0.0])
    rules = []
    for m in megrams:
        if m.level == "C":
            rules.append(m)
            continue
        if m.level != "K" and m.level != "M":
            continue
        ref = m.created_at if m.last_recalled_at is None else max(m.created_at, m.last_recalled_at)
        g = math.exp(-m.k * max(0.0, now - ref) / DAY)
        att = abs(m.f) * g
        if att < 0.1:
            forget.add(m.id)
            continue
        dec = m.sigma * m.f * g
        key = (m.space, m.entity)
        evidence[key].append((m.created_at, att, dec))
        if m.id not in consolidated:
            sums = pool[key]
            sums[0] += att
            sums[1] += dec
    demoted = set()
    for c in rules:
        later = [d for t, _, d in evidence.get((c.space, c.entity), ()) if t > c.created_at]
        dec = sum(later)
        if later and ((c.sigma > 0 and dec < 0) or (c.sigma < 0 and dec > 0)):
            demoted.add(c.id)
    kinds = {(c.space, c.entity, c.sigma > 0) for c in rules if c.id not in demoted}
    candidates = 0
    for key, (att, dec) in pool.items():
        if att >= 5.0 and dec >= 3.0 and (*key, True) not in kinds:
            candidates += 1
        elif att >= 5.0 and dec <= -3.0 and (*key, False) not in kinds:
            candidates += 1
    return len(forget), len(demoted), candidates


# --------------------------------------------------------------------------- timing
def latencies(fn: Callable[[int], object], n: int) -> list[float]:
    out = []
    for i in range(n):
        t = time.perf_counter_ns()
        fn(i)
        out.append((time.perf_counter_ns() - t) / 1e3)
    return out


def pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))]


def best_of(fn: Callable[[], object], repeat: int) -> tuple[float, object]:
    best, result = math.inf, None
    for _ in range(repeat):
        t = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t)
    return best, result


def run_size(n: int, tags: list[tuple[str, str]], queries: int, seed: int) -> dict[str, Any]:
    events = make_events(n, tags, seed)
    now = T0
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp, "memory")
        with MegramStore.open(path) as store:
            t = time.perf_counter()
            store.apply_many(events)
            fill_s = time.perf_counter() - t
        t = time.perf_counter()
        store = MegramStore.open(path)
        reopen_s = time.perf_counter() - t
        try:
            megrams = list(store.megrams())
            cols = store.snapshot()
            consolidated = {cols.ids[i] for i in np.flatnonzero(cols.consolidated).tolist()}
            by_tag: dict[tuple[str, str], list[Megram]] = defaultdict(list)
            for m in megrams:
                by_tag[(m.space, m.entity)].append(m)
            rng = np.random.default_rng(seed + 1)
            picks = [tags[i] for i in rng.integers(0, len(tags), size=queries)]

            for i in range(min(50, queries)):  # warm-up, and the two agree
                a = store.query_mk(*picks[i], now)
                b = py_query(by_tag[picks[i]], now)
                assert abs(a[0] - b[0]) < 1e-6 and abs(a[1] - b[1]) < 1e-6, (a, b)
            ours = latencies(lambda i: store.query_mk(*picks[i], now), queries)
            loop = latencies(lambda i: py_query(by_tag[picks[i]], now), queries)
            db = store._require_db()  # the same LevelDB, read the paper's way
            scan_n = min(queries, 500)
            scan = latencies(lambda i: leveldb_query(db, *picks[i], now), scan_n)

            strong_s, strong = best_of(lambda: store.strongest("tool:", "avoid", 10, now), 3)
            py_strong_s, py_strong = best_of(lambda: py_strongest(by_tag, now), 1)
            assert [(t.space, t.entity) for t in strong] == [(s, e) for _, s, e in py_strong]

            pass_s, out = best_of(lambda: plan_pass(store, now), 1)
            py_pass_s, py_counts = best_of(lambda: py_pass(megrams, consolidated, now), 1)
            plan = plan_columns(store.snapshot(), now)  # every cluster, not only those distilled
            counts = (len(plan.forget), len(plan.demote), len(plan.clusters))
            assert counts == py_counts, (counts, py_counts)
            distilled = sum(isinstance(x, ConsolidationCandidate) for x in out)
        finally:
            store.close()
    return {
        "megrams": n,
        "rules": sum(isinstance(e, SOPPromoted) for e in events),
        "fill_s": round(fill_s, 3),
        "fill_per_s": round(len(events) / fill_s),
        "reopen_s": round(reopen_s, 3),
        "query_mk_p50_us": round(pct(ours, 0.5), 1),
        "query_mk_p99_us": round(pct(ours, 0.99), 1),
        "py_loop_p50_us": round(pct(loop, 0.5), 1),
        "py_loop_p99_us": round(pct(loop, 0.99), 1),
        "leveldb_scan_p50_us": round(pct(scan, 0.5), 1),
        "leveldb_scan_p99_us": round(pct(scan, 0.99), 1),
        "query_mk_vs_py_loop_p50": round(pct(loop, 0.5) / pct(ours, 0.5), 2),
        "query_mk_vs_leveldb_scan_p50": round(pct(scan, 0.5) / pct(ours, 0.5), 2),
        "strongest_ms": round(strong_s * 1e3, 2),
        "py_strongest_ms": round(py_strong_s * 1e3, 2),
        "strongest_speedup": round(py_strong_s / strong_s, 2),
        "plan_pass_s": round(pass_s, 3),
        "py_pass_s": round(py_pass_s, 3),
        "plan_pass_speedup": round(py_pass_s / pass_s, 2),
        "pass_counts": {"forgotten": counts[0], "demoted": counts[1], "clusters": counts[2]},
        "distilled": distilled,
        "query_mk_mean_us": round(statistics.fmean(ours), 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="10000,100000,1000000", help="comma-separated")
    parser.add_argument("--pairs", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=2_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true", help="end with one JSON line")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    tags = make_tags(args.tags)
    results = []
    for n in sizes:
        r = run_size(n, tags, args.queries, args.seed)
        results.append(r)
        print(
            f"n={n:>9,}  fill {r['fill_per_s']:>9,}/s  reopen {r['reopen_s']:.2f}s  "
            f"query_mk p50 {r['query_mk_p50_us']:.1f}µs p99 {r['query_mk_p99_us']:.1f}µs  "
            f"(py loop p50 {r['py_loop_p50_us']:.1f}µs ×{r['query_mk_vs_py_loop_p50']}, "
            f"leveldb scan p50 {r['leveldb_scan_p50_us']:.1f}µs "
            f"×{r['query_mk_vs_leveldb_scan_p50']})"
        )
        print(
            f"{'':13}strongest {r['strongest_ms']:.2f}ms (py {r['py_strongest_ms']:.1f}ms "
            f"×{r['strongest_speedup']})  plan_pass {r['plan_pass_s']:.3f}s "
            f"(py {r['py_pass_s']:.3f}s ×{r['plan_pass_speedup']})  {r['pass_counts']}"
        )
        sys.stdout.flush()
    summary = {"bench": "memory", "tags": args.tags, "queries": args.queries, "sizes": results}
    if args.json:
        print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
