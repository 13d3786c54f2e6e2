"""Benchmark of recall by meaning (issue 21), measured as seed 003 measures retrieval.

Quality: a labelled set of our own — 60 past requests in 12 families (a family is one
task, one intent tag; several families share words on purpose: lines/words/TODOs of the
same files, listing/counting python files, deleting/renaming a file, the largest file/a
folder's size) and 20 new queries, each labelled relevant (its family), distractor (the
keyword-sharing families that answer another question) or irrelevant. For each method,
nUDCG@5 (+1 relevant, −1 distractor, 0 irrelevant, discounted by log2(rank + 1),
normalised by the ideal list) and the distractors in the top 5 and top 3:

- ``exact-slug`` — the old recall: the requests whose slug equals the query's (a code slug,
  the first three BM25 terms: the best an exact-tag match can do);
- ``keyword`` — BM25 top 5 requests;
- ``vector`` — cosine top 5 requests;
- ``keyword/tag``, ``vector/tag`` — one list alone, grouped by tag as recall groups them
  (tags ranked by the reciprocal-rank sum of their requests; the best tag's requests
  first) — the single methods under the same grouping as the fused one;
- ``fused+flag`` — tags ranked by RRF of their keyword and vector ranks, flagged
  (distractor) tags and tags below the embedder's ``similar`` line dropped: what Memory
  reads.

Cost: p50 of one :meth:`RecallIndex.search` (both lists, fusion, flags) at 10⁴ and 10⁶
past requests, against brute force in the same run (every vector scored, BM25 by a Python
scan of every request's terms), and how much of brute force's vector top 10 the index's
top 10 holds (the inverted-file index is approximate). The 10⁶ requests are synthetic
texts from the families' vocabulary with synthetic unit vectors (clustered, 384
dimensions) — embedding 10⁶ requests with MiniLM would take hours; the search cost does
not depend on where the vectors came from. The query's own embedding is timed separately.

Usage: ``python bench/recall.py [--embedder minilm|hash] [--sizes 10000,1000000]
[--json]``. Default embedder: minilm when its weights are installed, else hash.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from collections import Counter
from typing import Any

import numpy as np

from artoo.eventstore import (
    EmbedderUnavailable,
    RecallIndex,
    keyword_terms,
    make_embedder,
    task_text,
)

FAMILIES: dict[str, list[str]] = {
    "count-lines": [
        "how many lines are in notes/todo.txt",
        "count the lines of src/app.py",
        "how many lines does README.md have",
        "give me the line count of data/sales.csv",
        "number of lines in docs/intro.md",
    ],
    "count-words": [
        "how many words are in notes/todo.txt",
        "count the words in README.md",
        "word count of docs/intro.md",
        "how many words does notes/ideas.md contain",
        "total number of words in CHANGELOG.md",
    ],
    "delete-file": [
        "delete notes/todo.txt",
        "remove the file archive/old.log",
        "erase build/output.bin",
        "get rid of tmp/cache.json",
        "delete the stale lock file .lock",
    ],
    "list-python": [
        "list the python files under src",
        "which .py files are in tests",
        "show all python modules in the repo",
        "find every python file in scripts",
        "print the names of the python sources under lib",
    ],
    "count-python": [
        "how many python files are under src",
        "count the .py files in tests",
        "number of python modules in the repo",
        "how many python scripts are in scripts",
        "tally the python files under lib",
    ],
    "largest-file": [
        "what is the largest file in the repo",
        "find the biggest file under data",
        "which file takes the most space",
        "show the heaviest file in build",
        "largest file in the logs folder",
    ],
    "last-commit": [
        "show the last commit message",
        "what was the most recent commit",
        "print the latest git commit",
        "display the newest entry of the git log",
        "what did the last commit change",
    ],
    "count-todo": [
        "how many TODO items are in notes/todo.txt",
        "count the TODO markers in src",
        "number of TODO comments in the code",
        "how many FIXME or TODO notes are in lib",
        "tally the open TODOs in notes/todo.txt",
    ],
    "sum-sales": [
        "report the total of this year's sales figures",
        "sum the amount column of data/sales.csv",
        "what is the total revenue in data/sales.csv",
        "add up the sales amounts",
        "total sales for 2024",
    ],
    "rename-file": [
        "rename notes/todo.txt to notes/done.txt",
        "move README.md to docs/README.md",
        "change the name of data/sales.csv to data/2024.csv",
        "rename the file app.py to main.py",
        "mv build/out.bin to dist/out.bin",
    ],
    "search-text": [
        "find the files that mention timeout",
        "which files contain the word password",
        "search the repo for deprecated",
        "grep for FIXME in src",
        "where is the string api_key used",
    ],
    "folder-size": [
        "how big is the data folder",
        "what is the total size of build",
        "disk usage of the logs directory",
        "how much space does node_modules take",
        "size of the src tree in megabytes",
    ],
}

QUERIES: list[tuple[str, str, tuple[str, ...]]] = [
    # (query, its family, the keyword-sharing families that answer another question)
    ("what's the number of lines in docs/guide.md", "count-lines", ("count-words",)),
    ("line count for notes/ideas.md please", "count-lines", ("count-words",)),
    ("how many words does docs/guide.md have", "count-words", ("count-lines",)),
    ("count words in notes/todo.txt", "count-words", ("count-lines", "count-todo")),
    ("please delete the file tmp/old.txt", "delete-file", ("rename-file",)),
    ("remove data/sales.csv", "delete-file", ("rename-file", "sum-sales")),
    ("list all .py files in the project", "list-python", ("count-python",)),
    ("show me the python files inside src", "list-python", ("count-python",)),
    ("count the python files under src", "count-python", ("list-python",)),
    ("how many .py files does tests contain", "count-python", ("list-python",)),
    ("which is the biggest file in the repository", "largest-file", ("folder-size",)),
    ("find the largest file under logs", "largest-file", ("folder-size",)),
    ("what is the latest commit message", "last-commit", ()),
    ("show me the most recent git commit", "last-commit", ()),
    ("how many TODO comments are in src/app.py", "count-todo", ("count-lines", "search-text")),
    ("count the TODO items in notes/todo.txt", "count-todo", ("count-lines", "count-words")),
    ("what is the sum of the sales figures in data/sales.csv", "sum-sales", ("rename-file",)),
    ("rename data/report.csv to data/final.csv", "rename-file", ("delete-file",)),
    ("search the code for the word deprecated", "search-text", ("count-todo",)),
    ("how much disk space does the data directory use", "folder-size", ("largest-file",)),
]

# Written after the method was frozen (tags as the unit, masking, stop words, thresholds):
# a check that they were not fitted to the set above. Same labels, other tasks.
HOLDOUT_FAMILIES: dict[str, list[str]] = {
    "run-tests": [
        "run the test suite",
        "execute all the unit tests",
        "run pytest on the tests folder",
        "launch the tests and report failures",
        "check that the tests pass",
    ],
    "count-tests": [
        "how many test functions are there",
        "count the tests in tests/test_app.py",
        "number of test cases in the suite",
        "how many tests does tests/test_util.py define",
        "tally the test functions under tests",
    ],
    "create-file": [
        "create the file out/hello.txt containing hello",
        "write a new file notes/done.txt with the text done",
        "make a file called build/version.txt holding 1.0",
        "add a file docs/todo.md that says todo",
        "save the word ok into out/status.txt",
    ],
    "read-file": [
        "show me the contents of notes/todo.txt",
        "print README.md",
        "what does src/util.py say",
        "display the text of docs/intro.md",
        "open data/sales.csv and show it",
    ],
    "find-function": [
        "which file defines the function greet",
        "where is the class User defined",
        "find the definition of parse_args",
        "in which module is main declared",
        "locate the function load_config",
    ],
    "sum-column": [
        "what is the total of the amount column in data/sales.csv",
        "sum the prices in data/orders.csv",
        "add up the quantity column of data/stock.csv",
        "total of the values in data/metrics.csv",
        "what do the amounts in data/sales.csv add up to",
    ],
}

HOLDOUT_QUERIES: list[tuple[str, str, tuple[str, ...]]] = [
    ("please run the tests", "run-tests", ("count-tests",)),
    ("do the unit tests pass?", "run-tests", ("count-tests",)),
    ("how many tests are in tests/test_models.py", "count-tests", ("run-tests",)),
    ("create out/greeting.txt with the text hi", "create-file", ("read-file",)),
    ("show the file notes/ideas.md", "read-file", ("create-file",)),
    ("what is in data/orders.csv", "read-file", ("sum-column",)),
    ("where is the function render defined", "find-function", ()),
    ("sum the amount column of data/refunds.csv", "sum-column", ("read-file",)),
    ("how many files are in the tests folder", "count-tests", ("run-tests",)),
    ("write the text yes into out/answer.txt", "create-file", ("read-file",)),
]

# A second held-out set, written on 2026-11-26 before any change to the distractor rule was
# tried, and never used to tune it: six more families in three pairs that share words.
HOLDOUT2_FAMILIES: dict[str, list[str]] = {
    "git-status": [
        "show the git status",
        "which files changed since the last commit",
        "list the uncommitted changes",
        "what did I modify in the repository",
        "show the diff of my working tree",
    ],
    "git-commit": [
        "commit the changes with the message fix",
        "make a commit of all staged files",
        "record the current changes in git",
        "commit everything with the message wip",
        "save my work as a git commit",
    ],
    "install-package": [
        "install the requests package",
        "pip install numpy",
        "add pandas to the environment",
        "set up the dependency flask",
        "install pytest into the virtual environment",
    ],
    "list-packages": [
        "which packages are installed",
        "list the installed python packages",
        "show the pip freeze output",
        "what version of numpy is installed",
        "print the installed dependencies",
    ],
    "rename-file": [
        "rename notes/a.txt to notes/b.txt",
        "move src/old.py to src/new.py",
        "change the name of report.md to summary.md",
        "give data/x.csv the name data/y.csv",
        "rename the file draft.txt as final.txt",
    ],
    "delete-file": [
        "delete out/tmp.txt",
        "remove the file build/cache.bin",
        "erase notes/old.md",
        "get rid of data/backup.csv",
        "remove logs/debug.log from the workspace",
    ],
}

HOLDOUT2_QUERIES: list[tuple[str, str, tuple[str, ...]]] = [
    ("what has changed in git?", "git-status", ("git-commit",)),
    ("commit my edits with the message done", "git-commit", ("git-status",)),
    ("install the package rich", "install-package", ("list-packages",)),
    ("is numpy installed?", "list-packages", ("install-package",)),
    ("rename src/a.py to src/b.py", "rename-file", ("delete-file",)),
    ("delete the file notes/scratch.txt", "delete-file", ("rename-file",)),
    ("show the uncommitted changes", "git-status", ("git-commit",)),
    ("list every installed package", "list-packages", ("install-package",)),
    ("remove tmp/out.log", "delete-file", ("rename-file",)),
    ("move docs/a.md to docs/b.md", "rename-file", ("delete-file",)),
]

METHODS = ("exact-slug", "keyword", "vector", "keyword/tag", "vector/tag", "fused+flag")


def slug(text: str) -> str:
    """The exact-slug baseline's code slug: the first three BM25 terms."""
    return "-".join(keyword_terms(text)[:3])


def nudcg(utilities: list[int], relevant: int, k: int = 5) -> float:
    """Seed 003's nUDCG@k of a ranked list of utilities (+1, 0, −1)."""
    gain = sum(u / math.log2(i + 2) for i, u in enumerate(utilities[:k]))
    ideal = sum(1 / math.log2(i + 2) for i in range(min(k, relevant)))
    return gain / ideal if ideal else 0.0


def _ranked(index: RecallIndex, query: str, method: str, tags: list[str]) -> list[int]:
    if method == "exact-slug":
        want = slug(query)
        return [d for d in range(len(index)) if slug(index.texts[d]) == want][:5]
    if method == "keyword":
        return [d for d, _ in index.keyword(query, 5)]
    if method == "vector":
        return [d for d, _ in index.vector(query, 5, brute=True)]
    if method in ("keyword/tag", "vector/tag"):
        return [h.doc for h in index.search(query, 5, method.split("/")[0])]  # type: ignore[arg-type]
    hits = index.search(query, k=index.depth)
    return [h.doc for h in hits if h.recalled][:5]


def quality(
    embedder_name: str,
    families: dict[str, list[str]] = FAMILIES,
    queries: list[tuple[str, str, tuple[str, ...]]] = QUERIES,
) -> dict[str, Any]:
    """nUDCG@5 and distractor counts of every method over a labelled set."""
    index = RecallIndex(make_embedder(embedder_name))
    texts = [t for ts in families.values() for t in ts]
    tags = [f"intent:{family}" for family, ts in families.items() for _ in ts]
    index.add_many(texts, tags)
    out: dict[str, Any] = {}
    for method in METHODS:
        scores, top5, top3_clean = [], 0, 0
        for query, family, distracting in queries:
            ranked = _ranked(index, query, method, tags)
            utilities = []
            for d in ranked:
                tag = tags[d].removeprefix("intent:")
                utilities.append(1 if tag == family else -1 if tag in distracting else 0)
            scores.append(nudcg(utilities, len(families[family])))
            top5 += utilities[:5].count(-1)
            top3_clean += -1 not in utilities[:3]
        out[method] = {
            "nudcg5": statistics.fmean(scores),
            "distractors_top5": top5,
            "queries_clean_top3": top3_clean / len(queries),
        }
    return out


def _synthetic(n: int, dim: int, seed: int = 0) -> tuple[list[str], list[str], np.ndarray]:
    rng = np.random.default_rng(seed)
    words = sorted({w for ts in FAMILIES.values() for t in ts for w in t.split()})
    files = [f"dir{i}/file{i}.txt" for i in range(5000)]
    lengths = rng.integers(4, 10, size=n)
    picks = rng.integers(0, len(words), size=int(lengths.sum()))
    file_of = rng.integers(0, len(files), size=n)
    texts, at = [], 0
    for i, length in enumerate(lengths.tolist()):
        texts.append(" ".join(words[j] for j in picks[at : at + length]) + " " + files[file_of[i]])
        at += length
    tags = [f"intent:t{i % 10_000}" for i in range(n)]
    centers = rng.standard_normal((1000, dim)).astype(np.float32)
    vectors = centers[rng.integers(0, 1000, size=n)] + 0.5 * rng.standard_normal((n, dim)).astype(
        np.float32
    )
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return texts, tags, vectors


class _Given:
    """An embedder answering from a table (the synthetic vectors), for the cost runs."""

    name, similar = "given", 0.7

    def __init__(self, dim: int, table: dict[str, np.ndarray]) -> None:
        self.dim = dim
        self.table = table

    def embed(self, texts: Any) -> np.ndarray:
        return np.stack([self.table[t] for t in texts])


def _p50(samples: list[float]) -> float:
    return statistics.median(samples) * 1000.0


def cost(sizes: list[int], embedder_name: str, queries: int = 50) -> dict[str, Any]:
    """p50 ms of one search against brute force, per size; and the query embedding."""
    dim = make_embedder(embedder_name).dim
    out: dict[str, Any] = {}
    embedder = make_embedder(embedder_name)
    samples = []
    for query, _, _ in QUERIES * 3:
        embedder_cache = getattr(embedder, "_cache", {})
        embedder_cache.pop(query, None)
        start = time.perf_counter()
        embedder.embed([query])
        samples.append(time.perf_counter() - start)
    out["embed_query_ms_p50"] = _p50(samples)
    for n in sizes:
        texts, tags, vectors = _synthetic(n, dim)
        rng = np.random.default_rng(1)
        qs = [texts[i] for i in rng.integers(0, n, size=queries)]
        wanted = set(qs)
        qvecs = {task_text(t): vectors[i] for i, t in enumerate(texts) if t in wanted}
        index = RecallIndex(_Given(dim, qvecs))
        start = time.perf_counter()
        index.add_many(texts, tags, vectors)
        fill_s = time.perf_counter() - start
        start = time.perf_counter()
        index.vector(qs[0])  # builds the IVF past ivf_min
        build_s = time.perf_counter() - start
        fast, overlap = [], []
        for q in qs:
            start = time.perf_counter()
            index.search(q, 5)
            fast.append(time.perf_counter() - start)
            approx = {d for d, _ in index.vector(q, 10)}
            exact = {d for d, _ in index.vector(q, 10, brute=True)}
            overlap.append(len(approx & exact) / 10)
        term_lists = [Counter(keyword_terms(t)) for t in texts]
        matrix = vectors
        brute = []
        for q in qs[: max(3, queries // (10 if n > 100_000 else 1))]:
            start = time.perf_counter()
            terms = keyword_terms(q)
            bm = [(sum(tl.get(w, 0) for w in terms), i) for i, tl in enumerate(term_lists)]
            bm.sort(reverse=True)
            sims = matrix @ qvecs[task_text(q)]
            np.argsort(-sims)[:50]
            brute.append(time.perf_counter() - start)
        out[str(n)] = {
            "search_ms_p50": _p50(fast),
            "brute_ms_p50": _p50(brute),
            "speedup": _p50(brute) / _p50(fast),
            "fill_s": fill_s,
            "ivf_build_s": build_s,
            "ivf": n >= index.ivf_min,
            "vector_recall_at_10": statistics.fmean(overlap),
        }
        del index, term_lists, matrix, texts, vectors
    return out


def main(argv: list[str] | None = None) -> int:
    """Run the bench and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--embedder", choices=["minilm", "hash"], default=None)
    parser.add_argument("--sizes", default="10000,1000000")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    name = args.embedder
    if name is None:
        try:
            make_embedder("minilm")
            name = "minilm"
        except EmbedderUnavailable:
            name = "hash"
    past = sum(len(ts) for ts in FAMILIES.values())
    families, queries = len(FAMILIES), len(QUERIES)
    print(f"embedder {name}; {past} past requests in {families} families, {queries} queries")
    figures: dict[str, Any] = {
        "embedder": name,
        "quality": quality(name),
        "holdout": quality(name, HOLDOUT_FAMILIES, HOLDOUT_QUERIES),
        "holdout2": quality(name, HOLDOUT2_FAMILIES, HOLDOUT2_QUERIES),
    }
    sets = (("quality", "labelled set"), ("holdout", "held-out set"), ("holdout2", "held-out 2"))
    for key, title in sets:
        print(f"{title}: {'method':<12} {'nUDCG@5':>8} {'distractors@5':>14} {'clean top3':>11}")
        for method, q in figures[key].items():
            print(
                f"{'':{len(title) + 2}}{method:<12} {q['nudcg5']:>8.3f} "
                f"{q['distractors_top5']:>14d} {q['queries_clean_top3']:>10.0%}"
            )
    sizes = [int(s) for s in args.sizes.split(",") if s]
    figures["cost"] = cost(sizes, name)
    print(f"query embedding p50 {figures['cost']['embed_query_ms_p50']:.2f} ms ({name})")
    for n in sizes:
        c = figures["cost"][str(n)]
        print(
            f"n={n:>9,}: search p50 {c['search_ms_p50']:.2f} ms, brute force p50 "
            f"{c['brute_ms_p50']:.1f} ms ({c['speedup']:.0f}x); fill {c['fill_s']:.1f} s, "
            + (f"IVF built in {c['ivf_build_s']:.1f} s" if c["ivf"] else "IVF not used")
            + f"; vector top 10 = brute force's on {c['vector_recall_at_10']:.0%}"
        )
        embed_ms = figures["cost"]["embed_query_ms_p50"]
        print(
            f"{'':12}recall of an unprepared text: embed + search = "
            f"{embed_ms + c['search_ms_p50']:.2f} ms; on the round-0 path, the request "
            f"embedded ahead (Memory, during the Perceiver's call): search = "
            f"{c['search_ms_p50']:.2f} ms"
        )
    if args.json:
        print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
