#!/usr/bin/env python3
"""Fits and checks the search score's no-match rule and scale
(`papers::search::relevance`) on candidate pools written by
`cargo bench --bench beir -- dump DIR` (with PAPERS_ARXIV_INDEX set to an
index of arXiv abstracts for the arXiv sets).

    python3 bench/score.py DIR

Needs numpy. Every set is split: SciFact's train claims and the even
queries of the other labelled sets are fitted on; SciFact's test claims,
the odd queries, and every random-letter set are only checked. Prints the
constants for src/search/relevance.rs and the tables of docs/guide.md.

Lexical mode decides whether a query matches with hybrid mode's rule, over
hybrid mode's best ten (the query's meaning and its words); its words-only
rule, fitted here too, is what it falls back to without the model.
"""
import collections
import functools
import sys

import numpy as np

DIR = sys.argv[1]
# The evidence calibration (relevance::SEMANTIC/LEXICAL/HYBRID):
# intercept, cosine, BM25 share, ln(terms).
EVIDENCE = {
    "semantic": (-10.780, 18.116, 0.0, -0.994),
    "lexical": (-11.128, 0.0, 16.143, 1.267),
    "hybrid": (-10.692, 8.872, 9.445, 0.071),
}
MODES = ["semantic", "lexical", "hybrid"]
LABELLED = ["scifact-train", "scifact-test", "seeds", "arxiv-titles", "arxiv-typed"]
# Typo'd queries as search corrects them ("-raw": as typed), beside their
# clean sets.
TYPOS = ["seeds", "arxiv-titles", "arxiv-typed"]
ELSEWHERE = ["cs-on-scifact", "scifact-train-on-seeds", "scifact-test-on-seeds",
             "scifact-test-on-arxiv", "nonsense-scifact", "nonsense-seeds", "nonsense-arxiv"]
FIT_MATCH = ["scifact-train", "seeds", "arxiv-titles", "arxiv-typed"]
FIT_NONE = ["scifact-train-on-seeds", "cs-on-scifact"]
# The no-match threshold keeps at most this share of relevant top-10
# records from being dropped on these fitted sets.
LOSS, LOSS_SETS = 0.01, ["scifact-train", "seeds"]


def fitted(name, q):
    if name == "scifact-train":
        return True
    if name.startswith("nonsense") or name.startswith("scifact-test"):
        return False
    return q % 2 == 0


@functools.lru_cache(None)
def load(name):
    pools = collections.defaultdict(list)
    try:
        lines = open(f"{DIR}/{name}.tsv")
    except FileNotFoundError:
        return None
    for line in lines:
        _, q, terms, row, cos, share, sem, lex, rel, n, centre = line.split("\t")
        pools[int(q)].append((int(terms), int(row), float(cos), float(share),
                              int(sem), int(lex), int(rel), float(centre), int(n)))
    return dict(pools)


@functools.lru_cache(None)
def top10(name, mode):
    """Each query's ten best candidates in `mode`: (evidence, candidate)."""
    a, b, c, d = EVIDENCE[mode]
    out = []
    for q, pool in sorted(load(name).items()):
        seen = [x for x in pool if mode == "hybrid" or (x[4] if mode == "semantic" else x[5])]
        scored = [(a + b * x[2] + c * x[3] + d * np.log(max(x[0], 1)), x) for x in seen]
        scored.sort(key=lambda t: (-t[0], t[1][1]))
        out.append((q, scored[:10]))
    return out


def query_features(mode, best):
    cos = max(x[2] for _, x in best)
    share = max(x[3] for _, x in best)
    length = np.log(max(best[0][1][0], 1))
    # The query's cosine with the collection's centre helps hybrid mode
    # tell fields apart; semantic mode alone it misleads (random letter
    # strings lie near every centre), so it reads it not.
    centre = best[0][1][7]
    return {"semantic": [1, cos, length], "lexical": [1, share, length],
            "hybrid": [1, cos, share, length, centre]}[mode]


def logistic(X, y, w, ridge=1e-4):
    X, y, w = np.asarray(X, float), np.asarray(y, float), np.asarray(w, float)
    beta = np.zeros(X.shape[1])
    for _ in range(100):
        p = 1 / (1 + np.exp(-X @ beta))
        step = np.linalg.solve((X.T * (w * p * (1 - p))) @ X + ridge * np.eye(len(beta)),
                               X.T @ (w * (p - y)) + ridge * beta)
        beta -= step
        if np.abs(step).sum() < 1e-10:
            break
    return beta


def sets(names):
    return [n for n in names if load(n) is not None]


def dropped(name, mode, rule, part):
    """Share of the relevant top-10 records in queries the rule drops;
    `rule(name, q, best)` judges query q of the set from its best ten."""
    rel = lost = 0
    for q, best in top10(name, mode):
        if fitted(name, q) != part or not best:
            continue
        r = sum(x[6] for _, x in best)
        rel += r
        lost += 0 if rule(name, q, best) else r
    return lost / max(rel, 1)


def empty(name, mode, rule, part):
    qs = [(q, best) for q, best in top10(name, mode) if fitted(name, q) == part]
    return sum(1 for q, best in qs if not best or not rule(name, q, best)) / max(len(qs), 1), len(qs)


@functools.lru_cache(None)
def hybrid_best(name):
    return dict(top10(name, "hybrid"))


def by_rule(mode, beta, t):
    """The rule of `mode` as a judge: its features over the best ten."""
    return lambda name, q, best: np.dot(beta, query_features(mode, best)) >= t


def by_hybrid(beta, t):
    """Hybrid mode's rule judging any mode's query, over hybrid's best ten."""
    return lambda name, q, best: bool(hybrid_best(name)[q]) and \
        np.dot(beta, query_features("hybrid", hybrid_best(name)[q])) >= t


def main():
    rules, scales = {}, {}
    for mode in MODES:
        X, y, w = [], [], []
        for label, names in [(1, FIT_MATCH), (0, FIT_NONE)]:
            for n in sets(names):
                qs = [best for q, best in top10(n, mode) if best and fitted(n, q)]
                X += [query_features(mode, b) for b in qs]
                y += [label] * len(qs)
                w += [1 / len(qs)] * len(qs)
        beta = logistic(X, y, w)
        threshold = None
        for t in np.arange(-8, 4, 0.05):
            if max(dropped(n, mode, by_rule(mode, beta, t), True) for n in sets(LOSS_SETS)) <= LOSS:
                threshold = t
        rules[mode] = (beta, threshold)
        X, y, w = [], [], []
        for n in sets(FIT_MATCH):
            qs = [best for q, best in top10(n, mode) if best and fitted(n, q)]
            for best in qs:
                for e, x in best:
                    X.append([1, e])
                    y.append(x[6])
                    w.append(1 / len(qs) / len(best))
        scales[mode] = logistic(X, y, w)

    print("## Constants (src/search/relevance.rs)\n")
    print("| mode | no-match rule: intercept, cosine, BM25 share, ln(terms), centre | threshold | scale: intercept, slope |")
    print("|---|---|---|---|")
    for mode in MODES:
        beta, t = rules[mode]
        print(f"| {mode} | {', '.join(f'{v:.3f}' for v in beta)} | {t:.2f} | {', '.join(f'{v:.3f}' for v in scales[mode])} |")

    def rule_of(column):
        if column == "lexical":
            return by_hybrid(*rules["hybrid"])
        return by_rule(column.split(",")[0], *rules[column.split(",")[0]])

    # The last column: lexical mode without the model (its words-only rule).
    columns = MODES + ["lexical, words only"]
    head = "| set | " + " | ".join(columns) + " |\n|---|---|---|---|---|"

    print("\n## Relevant records of each top 10 in queries whose verdict is none (fitted part / checked part)\n")
    print(head)
    for n in sets(LABELLED):
        cells = []
        for column in columns:
            mode = column.split(",")[0]
            parts = [f"{100 * dropped(n, mode, rule_of(column), p):.1f}%"
                     for p in (True, False) if any(fitted(n, q) == p for q, _ in top10(n, mode))]
            cells.append(" / ".join(parts))
        print(f"| {n} | " + " | ".join(cells) + " |")

    print("\n## Queries about something else whose verdict is none (fitted part / checked part)\n")
    print(head)
    for n in sets(ELSEWHERE):
        cells = []
        for column in columns:
            mode = column.split(",")[0]
            parts = []
            for p in (True, False):
                share, count = empty(n, mode, rule_of(column), p)
                if count:
                    parts.append(f"{100 * share:.0f}% of {count}")
            cells.append(" / ".join(parts))
        print(f"| {n} | " + " | ".join(cells) + " |")

    print("\n## The score: median for a relevant top hit, calibration error, and the share relevant by score (top 10 of each query)\n")
    print("| mode | set | part | queries | median score, relevant top-1 | ECE (10 bins) | under 0.2 | 0.2-0.5 | 0.5-0.8 | 0.8 and up |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for mode in MODES:
        s = scales[mode]
        for n in sets(LABELLED):
            for p in (True, False):
                qs = [best for q, best in top10(n, mode) if best and fitted(n, q) == p]
                if not qs:
                    continue
                score = lambda e, best: 1 / (1 + np.exp(-(s[0] + s[1] * e)))
                tops = [score(best[0][0], best) for best in qs if best[0][1][6]]
                pairs = [(score(e, best), x[6]) for best in qs for e, x in best]
                cells = []
                for lo, hi in [(0, 0.2), (0.2, 0.5), (0.5, 0.8), (0.8, 1.01)]:
                    r = [rel for sc, rel in pairs if lo <= sc < hi]
                    cells.append(f"{100 * np.mean(r):.0f}% of {len(r)}" if r else "-")
                med = f"{np.median(tops):.2f}" if tops else "-"
                print(f"| {mode} | {n} | {'fitted' if p else 'checked'} | {len(qs)} | {med} | {ece(pairs):.3f} | " + " | ".join(cells) + " |")

    verdicts(rules, scales, rule_of)
    typos(rules, scales, rule_of)

    # What keeping every relevant test claim would cost: the rule's value
    # of the lowest test claim with a relevant record in its top 10, and
    # the queries about something else that would then get a hit.
    print("\n## Keeping every SciFact test claim that has a relevant record in its top 10\n")
    print("| mode | claims the rule drops now | threshold that keeps them all (now) | cs-on-scifact, no hit: now / then | scifact-train-on-seeds, no hit: now / then |")
    print("|---|---|---|---|---|")
    for column in ["semantic", "lexical", "hybrid"]:
        judge_mode = "hybrid" if column == "lexical" else column
        beta, t = rules[judge_mode]
        best_of = hybrid_best if column == "lexical" else (lambda n, m=column: dict(top10(n, m)))
        values = sorted(
            (float(np.dot(beta, query_features(judge_mode, best_of("scifact-test")[q]))), q)
            for q, best in top10("scifact-test", column)
            if best and any(x[6] for _, x in best) and best_of("scifact-test")[q])
        lost = [q for v, q in values if v < t]
        keep = min(t, values[0][0]) if values else t
        cells = []
        for n in ["cs-on-scifact", "scifact-train-on-seeds"]:
            if load(n) is None:
                cells.append("-")
                continue
            rate = lambda th: np.mean([not best_of(n).get(q) or np.dot(beta, query_features(judge_mode, best_of(n)[q])) < th
                                       for q, _ in top10(n, column)])
            cells.append(f"{100 * rate(t):.0f}% / {100 * rate(keep):.0f}%")
        print(f"| {column} | {len(lost)} | {keep:.2f} ({t:.2f}) | " + " | ".join(cells) + " |")


def ece(pairs, bins=10):
    """Expected calibration error: the gap between the mean score and the
    share relevant in each tenth of the scale, weighed by its hits."""
    total = len(pairs)
    error = 0.0
    for b in range(bins):
        inside = [(s, r) for s, r in pairs if b / bins <= s < (b + 1) / bins or (b == bins - 1 and s >= 1)]
        if inside:
            error += len(inside) / total * abs(np.mean([s for s, _ in inside]) - np.mean([r for _, r in inside]))
    return error


def verdict_of(mode, rules, scales, rule_of, column, name, q, best):
    """none, weak or strong, as papers says it."""
    if not best or not rule_of(column)(name, q, best):
        return "none"
    s = scales[mode]
    top = 1 / (1 + np.exp(-(s[0] + s[1] * best[0][0])))
    return "strong" if top >= 0.5 else "weak"


def verdicts(rules, scales, rule_of):
    print("\n## Verdicts: queries with a relevant paper in their top 10 that get none, and the verdicts of labelled queries (fitted part / checked part)\n")
    print("| mode | set | part | queries | relevant in top 10, verdict none | strong | weak | none |")
    print("|---|---|---|---|---|---|---|---|")
    for mode in MODES:
        for n in sets(LABELLED + [t + "-typos" for t in TYPOS]):
            for p in (True, False):
                qs = [(q, best) for q, best in top10(n, mode) if fitted(n, q) == p]
                if not qs:
                    continue
                v = [verdict_of(mode, rules, scales, rule_of, mode, n, q, best) for q, best in qs]
                found = [vv for (q, best), vv in zip(qs, v) if any(x[6] for _, x in best)]
                lost = sum(1 for vv in found if vv == "none")
                share = lambda k: f"{100 * v.count(k) / len(v):.0f}%"
                print(f"| {mode} | {n} | {'fitted' if p else 'checked'} | {len(qs)} | "
                      f"{100 * lost / max(len(found), 1):.1f}% of {len(found)} | {share('strong')} | {share('weak')} | {share('none')} |")


def ranking_quality(best):
    """MRR@10 and nDCG@10 (binary relevance) of one query's top 10."""
    rr = next((1 / (i + 1) for i, (_, x) in enumerate(best) if x[6]), 0.0)
    dcg = sum(x[6] / np.log2(i + 2) for i, (_, x) in enumerate(best))
    n = best[0][1][8] if best else 0
    ideal = sum(1 / np.log2(i + 2) for i in range(min(n, 10)))
    return rr, (dcg / ideal if ideal else 0.0)


def typos(rules, scales, rule_of):
    print("\n## Typos: MRR@10 and nDCG@10 of clean queries, typo'd ones as typed, and as corrected; fitted part / checked part\n")
    print("| mode | set | part | clean MRR@10 / nDCG@10 | typos as typed | typos corrected | corrected / clean | strong when clean, none with typos |")
    print("|---|---|---|---|---|---|---|---|")
    for mode in MODES:
        for n in TYPOS:
            if load(n) is None or load(n + "-typos") is None:
                continue
            for p in (True, False):
                cells = []
                for name in [n, n + "-typos-raw", n + "-typos"]:
                    qs = [best for q, best in top10(name, mode) if fitted(name, q) == p]
                    m = np.array([ranking_quality(b) if b else (0.0, 0.0) for b in qs])
                    cells.append(m.mean(axis=0))
                clean = dict(top10(n, mode))
                typo = dict(top10(n + "-typos", mode))
                flips = sum(1 for q in clean if fitted(n, q) == p
                            and verdict_of(mode, rules, scales, rule_of, mode, n, q, clean[q]) == "strong"
                            and verdict_of(mode, rules, scales, rule_of, mode, n + "-typos", q, typo.get(q, [])) == "none")
                ratio = cells[2] / np.maximum(cells[0], 1e-9)
                fmt = lambda c: f"{c[0]:.3f} / {c[1]:.3f}"
                print(f"| {mode} | {n} | {'fitted' if p else 'checked'} | {fmt(cells[0])} | {fmt(cells[1])} | {fmt(cells[2])} | {ratio[0]:.3f} / {ratio[1]:.3f} | {flips} |")


if __name__ == "__main__":
    main()
