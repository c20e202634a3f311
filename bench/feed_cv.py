"""Cross-validated choice of the feed's ranker, on arXiv categories.

Usage: python bench/feed_cv.py INDEX META [SEEDS] [--draws FILE | --papers FILE]

INDEX is a papers index of the arXiv papers of 2603-2604 (the pool) and
ten days of 300 papers from 2605 on, built with `papers index` from the
records of ../shared/bench/arxiv/arxiv-74k.jsonl.gz without their
categories; META (JSON) holds the categories (`labels`), the `pool` ids and
the `days` (bench/feed_cv.sh writes both). The protocol is the one of
`cargo bench --bench feed`, repeated: an interest is a category; its
profile is 20 liked papers carrying it and 20 disliked papers without it,
drawn from the pool (one draw per seed); each day's 300 papers are ranked;
relevant = carries the category; MAP and nDCG@10 over the (interest, day)
pairs with a relevant paper. The collection the rankers see is the
profile, 2,000 more pool papers and the days.

Categories with at least 20 pool papers and 10 day papers are eligible. A
quarter of them (by a hash of the name) is kept aside: no choice looks at
them. The rest are split into five folds; for each fold, the ranker (and
its settings) with the best MAP on the other four is chosen and scored on
it (nested cross-validation: the mean and spread of those scores is what
the choice is worth). The final choice, made on all five folds, is then
scored on the categories kept aside, beside every baseline.

papers' own rankers take part through `cargo bench --bench feed_cv`:
`--draws FILE` writes every draw (liked, disliked, collection, by arXiv
id) and the days, and stops; the bench scores each day with every ranker
of papers; `--papers FILE` reads those scores back as candidates named
"papers: ..." (bench/feed_cv.sh runs the three steps).
"""

import hashlib
import json
import sqlite3
import sys
import time
from pathlib import Path

import numpy as np
from scipy import sparse
from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.svm import LinearSVC

LIKED, DISLIKED, SAMPLE = 20, 20, 2000
# The weights of the meaning's block beside the words' in the SVMs over both.
MEANING_SCALES = (0.35, 0.5, 0.7)


def load(index_dir, meta_path):
    meta = json.loads(Path(meta_path).read_text())
    manifest = json.loads((Path(index_dir) / "manifest.json").read_text())
    data = Path(index_dir) / manifest["data_dir"]
    db = sqlite3.connect(data / "papers.sqlite")
    rows = db.execute("SELECT row, arxiv, body FROM papers").fetchall()
    vectors = np.fromfile(data / "vectors.f32", dtype="<f4").reshape(-1, manifest["dimension"])
    ids, vecs, texts, authors = [], [], [], []
    for row, arxiv, body in rows:
        paper = json.loads(body)
        m = paper.get("meta") or {}
        ids.append(arxiv)
        vecs.append(vectors[row])
        texts.append((m.get("title") or "") + ". " + paper["text"])
        authors.append(frozenset(m.get("authors") or []))
    return meta, ids, np.asarray(vecs, dtype=np.float32), texts, authors


def average_precision(relevant_in_order):
    hits, total = 0, 0.0
    for i, r in enumerate(relevant_in_order, 1):
        if r:
            hits += 1
            total += hits / i
    return total / max(hits, 1)


def ndcg10(relevant_in_order):
    gains = sum(1 / np.log2(i + 2) for i, r in enumerate(relevant_in_order[:10]) if r)
    ideal = sum(1 / np.log2(i + 2) for i in range(min(10, sum(relevant_in_order))))
    return gains / ideal if ideal else 0.0


def z(x):
    sd = x.std()
    return (x - x.mean()) / sd if sd > 0 else x * 0


class Data:
    def __init__(self, meta, ids, vecs, texts, authors):
        self.labels = meta["labels"]
        self.authors = authors
        self.at = {a: i for i, a in enumerate(ids)}
        self.vecs = vecs
        tfidf = TfidfVectorizer(
            strip_accents="unicode", lowercase=True, stop_words="english",
            token_pattern=r"(?u)\b[a-zA-Z_][a-zA-Z0-9_]+\b", ngram_range=(1, 2),
            max_df=0.1, min_df=5, sublinear_tf=True, norm="l2",
        )
        self.words = tfidf.fit_transform(texts).tocsr().astype(np.float32)
        self.both = sparse.hstack([sparse.csr_matrix(vecs), self.words]).tocsr()
        # The meaning at a fraction of the words' weight (both blocks are
        # unit vectors before the scaling).
        self.scaled = {s: sparse.hstack([sparse.csr_matrix(s * vecs), self.words]).tocsr()
                       for s in MEANING_SCALES}
        self.pool = [self.at[a] for a in meta["pool"] if a in self.at]
        self.days = [[self.at[a] for a in d if a in self.at] for d in meta["days"]]
        self.day_rows = sorted({r for d in self.days for r in d})
        # The meaning centred on the pool's mean, then unit length again.
        centred = vecs - vecs[self.pool].mean(0)
        centred /= np.linalg.norm(centred, axis=1, keepdims=True)
        self.centred = sparse.hstack([sparse.csr_matrix(0.5 * centred), self.words]).tocsr()
        self.papers_words = papers_like_words(texts)
        self.papers_scaled = {
            name: sparse.hstack([sparse.csr_matrix(0.5 * vecs), w]).tocsr()
            for name, w in self.papers_words.items()
        }
        self.by_author = {}
        for r in sorted(set(self.pool) | set(self.day_rows)):
            for a in authors[r]:
                self.by_author.setdefault(a, []).append(r)

    def has(self, row, category):
        return category in self.labels[IDS[row]]


def unit_rows(m):
    m = m.tocsr().astype(np.float32)
    norms = np.sqrt(np.asarray(m.multiply(m).sum(1))).ravel()
    norms[norms == 0] = 1
    return (sparse.diags(1 / norms) @ m).tocsr()


def papers_like_words(texts):
    """Word vectors closer to what papers can build from its index: every
    term (no stop words, no document-frequency cut), the title counted
    twice, (1 + ln tf) x idf; "unigrams" alone, and "bigrams" beside them
    weighted by the sum of their two words' IDF less one (papers' index
    keeps no document frequency of word pairs)."""
    twice = [t.split(". ", 1)[0] + ". " + t for t in texts]
    kw = dict(strip_accents="unicode", lowercase=True, token_pattern=r"(?u)\b[a-zA-Z0-9_][a-zA-Z0-9_]+\b")
    uni = TfidfVectorizer(sublinear_tf=True, norm=None, **kw).fit(twice)
    one = uni.transform(twice)
    idf = dict(zip(uni.get_feature_names_out(), uni.idf_))
    pairs = CountVectorizer(ngram_range=(2, 2), **kw).fit(twice)
    two = pairs.transform(twice).tocsr().astype(np.float32)
    two.data = 1 + np.log(two.data)
    pair_idf = np.array([idf.get(a, 1.0) + idf.get(b, 1.0) - 1.0
                         for a, b in (n.split(" ", 1) for n in pairs.get_feature_names_out())])
    return {"unigrams": unit_rows(one),
            "uni+bigrams": unit_rows(sparse.hstack([one, two @ sparse.diags(pair_idf)]))}


def author_smoothing(data, rows, score_of):
    """For each paper, the mean over its authors of the mean score of their
    other papers in the pool and the days (0 where none)."""
    out = np.zeros(len(rows))
    for i, r in enumerate(rows):
        means = [np.mean([score_of[q] for q in others]) for a in data.authors[r]
                 if (others := [q for q in data.by_author.get(a, []) if q != r])]
        out[i] = np.mean(means) if means else 0.0
    return out


def draw(data, category, seed):
    rng = np.random.default_rng(int(hashlib.sha256(f"{category}/{seed}".encode()).hexdigest(), 16) % (2**32))
    with_c = [r for r in data.pool if category in data.labels[IDS[r]]]
    without = [r for r in data.pool if category not in data.labels[IDS[r]]]
    liked = list(rng.choice(with_c, LIKED, replace=False))
    disliked = list(rng.choice(without, DISLIKED, replace=False))
    sample = list(np.random.default_rng(seed).choice(data.pool, SAMPLE, replace=False))
    taken = set(liked)
    collection = [r for r in dict.fromkeys(sample + data.day_rows + disliked) if r not in taken]
    return liked, disliked, collection


def svm(X, pos, neg, c, neg_weight=None):
    rows = pos + neg
    y = np.r_[np.ones(len(pos)), -np.ones(len(neg))]
    w = None
    if neg_weight is not None:
        w = np.r_[np.ones(len(pos)), neg_weight]
    model = LinearSVC(C=c, class_weight="balanced", tol=1e-4, max_iter=5000, dual=True)
    model.fit(X[rows], y, sample_weight=w)
    return model


def shared_authors(data, liked, disliked):
    """How often a paper's authors wrote a liked paper, less how often a
    disliked one, clipped to [-3, 3]."""
    wrote = {}
    for rows, sign in ((liked, 1), (disliked, -1)):
        for r in rows:
            for a in data.authors[r]:
                wrote[a] = wrote.get(a, 0) + sign
    return lambda rows: np.clip([sum(wrote.get(a, 0) for a in data.authors[r]) for r in rows], -3, 3)


def rocchio(data, liked, disliked, background, words=None):
    v = data.vecs
    d = v[liked].mean(0) - 0.75 * v[disliked].mean(0) - 0.2 * v[background].mean(0)
    w = data.words if words is None else words
    t = (np.asarray(w[liked].mean(0)) - 0.5 * np.asarray(w[disliked].mean(0))
         - 0.5 * np.asarray(w[background].mean(0))).ravel()
    return lambda rows: z(v[rows] @ d) + 0.5 * z(w[rows] @ t)


def rocchio_prf(data, liked, disliked, background, top=10, weight=0.5):
    """Rocchio, then again with the day's `top` best as extra liked papers
    (pseudo-relevance feedback over the papers being ranked)."""
    first = rocchio(data, liked, disliked, background)
    v, w = data.vecs, data.words

    def score(rows):
        s = first(rows)
        best = [rows[i] for i in np.argsort(-s)[:top]]
        liked_v = np.vstack([v[liked], v[best]])
        weights = np.r_[np.ones(len(liked)), weight * np.ones(len(best))]
        mean_l = (weights[:, None] * liked_v).sum(0) / weights.sum()
        d = mean_l - 0.75 * v[disliked].mean(0) - 0.2 * v[background].mean(0)
        t_l = (np.asarray(w[liked].sum(0)) + weight * np.asarray(w[best].sum(0))).ravel() / weights.sum()
        t = t_l - 0.5 * np.asarray(w[disliked].mean(0)).ravel() - 0.5 * np.asarray(w[background].mean(0)).ravel()
        return z(v[rows] @ d) + 0.5 * z(w[rows] @ t)

    return score


def scorers(data, liked, disliked, collection):
    """Every candidate: name -> function(rows) -> scores."""
    out = {}
    background = collection[:: max(1, len(collection) // SAMPLE)][:SAMPLE]
    v = data.vecs
    out["mean of liked"] = lambda rows, d=v[liked].mean(0): v[rows] @ d
    out["mean liked - mean disliked"] = lambda rows, d=v[liked].mean(0) - v[disliked].mean(0): v[rows] @ d
    out["Rocchio, meaning + words (shipped)"] = rocchio(data, liked, disliked, background)
    out["Rocchio + pseudo-relevance feedback (top 10)"] = rocchio_prf(data, liked, disliked, background)
    out["Rocchio + pseudo-relevance feedback (top 20)"] = rocchio_prf(data, liked, disliked, background, 20)
    out["SVM MiniLM liked vs disliked C=0.01"] = (
        lambda rows, m=svm(v, liked, disliked, 0.01): m.decision_function(v[rows]))
    out["SVM MiniLM vs collection C=0.01"] = (
        lambda rows, m=svm(v, liked, collection, 0.01): m.decision_function(v[rows]))
    out["SVM TF-IDF vs collection C=0.01 (arxiv-sanity)"] = (
        lambda rows, m=svm(data.words, liked, collection, 0.01): m.decision_function(data.words[rows]))
    for c in (0.001, 0.003, 0.01, 0.03):
        m = svm(data.both, liked, collection, c)
        out[f"SVM [MiniLM, TF-IDF] vs collection C={c}"] = lambda rows, m=m: m.decision_function(data.both[rows])
    by = shared_authors(data, liked, disliked)
    for scale in MEANING_SCALES:
        for c in (0.01, 0.02):
            X = data.scaled[scale]
            m = svm(X, liked, collection, c)
            name = f"SVM [{scale} MiniLM, TF-IDF] vs collection C={c}"
            out[name] = lambda rows, m=m, X=X: m.decision_function(X[rows])
            for weight in (0.5, 1.0, 1.5):
                out[f"z({name}) + {weight} shared authors"] = (
                    lambda rows, f=out[name], w=weight: z(f(rows)) + w * by(rows))
    for name in ("SVM [MiniLM, TF-IDF] vs collection C=0.01", "Rocchio, meaning + words (shipped)"):
        out[f"z({name}) + 1.0 shared authors"] = lambda rows, f=out[name]: z(f(rows)) + by(rows)
    dis = set(disliked)
    weights = np.array([5.0 if r in dis else 1.0 for r in collection])
    m = svm(data.both, liked, collection, 0.01, weights)
    out["SVM [MiniLM, TF-IDF], disliked x5, C=0.01"] = lambda rows, m=m: m.decision_function(data.both[rows])
    roc = out["Rocchio, meaning + words (shipped)"]
    prf = out["Rocchio + pseudo-relevance feedback (top 10)"]
    diff = out["mean liked - mean disliked"]
    for c in (0.003, 0.01):
        both = out[f"SVM [MiniLM, TF-IDF] vs collection C={c}"]
        out[f"z(SVM [MiniLM, TF-IDF] C={c}) + z(Rocchio)"] = lambda rows, a=both, b=roc: z(a(rows)) + z(b(rows))
        out[f"z(SVM [MiniLM, TF-IDF] C={c}) + z(Rocchio + feedback)"] = lambda rows, a=both, b=prf: z(a(rows)) + z(b(rows))
        out[f"z(SVM [MiniLM, TF-IDF] C={c}) + z(mean difference)"] = lambda rows, a=both, b=diff: z(a(rows)) + z(b(rows))
    # Smoothed over the papers being ranked: each paper's score plus the
    # mean score of its nearest neighbours among them (papers on one topic
    # lift each other).
    base = out["z(SVM [MiniLM, TF-IDF] C=0.01) + z(Rocchio)"]
    svm_both = out["SVM [MiniLM, TF-IDF] vs collection C=0.01"]
    for name, inner in [("ensemble", base), ("SVM [MiniLM, TF-IDF]", svm_both)]:
        for k, beta in [(5, 0.5), (10, 0.5), (10, 1.0), (20, 1.0)]:
            out[f"{name}, neighbour-smoothed k={k} b={beta}"] = (
                lambda rows, f=inner, k=k, beta=beta: smooth(data, rows, z(f(rows)), k, beta))
    more(data, liked, disliked, collection, by, out)
    return out


PER_TAG = ((0.35, 0.01), (0.5, 0.02), (0.5, 0.05), (0.7, 0.02), (1.0, 0.01))


def per_tag_choice(data, liked, collection):
    rng = np.random.default_rng(0)
    liked, collection = rng.permutation(liked), rng.permutation(collection)
    best, chosen = -1.0, PER_TAG[0]
    for scale, c in PER_TAG:
        X = data.scaled.get(scale, data.both)
        precisions = []
        for k in range(4):
            split = lambda rows, held: [r for i, r in enumerate(rows) if (i % 4 == k) == held]
            m = svm(X, split(liked, False), split(collection, False), c)
            held = split(liked, True) + split(collection, True)
            relevant = np.r_[np.ones(len(split(liked, True))), np.zeros(len(split(collection, True)))]
            precisions.append(average_precision(relevant[np.argsort(-m.decision_function(X[held]))]))
        if np.mean(precisions) > best:
            best, chosen = np.mean(precisions), (scale, c)
    return chosen


def more(data, liked, disliked, collection, by, out):
    """Candidates added when issue 37's target was still unmet: around the
    [0.5 MiniLM, TF-IDF] SVM at C = 0.02 plus shared authors."""
    X = data.scaled[0.5]
    first = svm(X, liked, collection, 0.02)
    plus = lambda f: (lambda rows: z(f(rows)) + by(rows))
    # Positive-unlabelled: the collection's top papers are likely relevant,
    # so drop them from the negatives and train again.
    order = np.argsort(-first.decision_function(X[collection]))
    for q in (0.02, 0.05, 0.1):
        keep = [collection[i] for i in order[int(q * len(collection)):]]
        m = svm(X, liked, keep, 0.02)
        out[f"SVM [0.5 MiniLM, TF-IDF] C=0.02, top {q:.0%} of the collection dropped from the negatives + shared authors"] = (
            plus(lambda rows, m=m: m.decision_function(X[rows])))
    # Self-training: the collection's top 20 as half-weight liked papers.
    top, rest = [collection[i] for i in order[:20]], [collection[i] for i in order[20:]]
    m = LinearSVC(C=0.02, class_weight="balanced", tol=1e-4, max_iter=5000, dual=True)
    m.fit(X[liked + top + rest], np.r_[np.ones(len(liked) + len(top)), -np.ones(len(rest))],
          sample_weight=np.r_[np.ones(len(liked)), 0.5 * np.ones(len(top)), np.ones(len(rest))])
    out["SVM [0.5 MiniLM, TF-IDF] C=0.02, collection's top 20 as half-weight liked + shared authors"] = (
        plus(lambda rows, m=m: m.decision_function(X[rows])))
    # Every pool paper and day as a negative instead of a 2,000 sample.
    full = [r for r in dict.fromkeys(data.pool + data.day_rows) if r not in set(liked)]
    for c in (0.01, 0.02):
        m = svm(X, liked, full, c)
        out[f"SVM [0.5 MiniLM, TF-IDF] vs the whole pool and days C={c} + shared authors"] = (
            plus(lambda rows, m=m: m.decision_function(X[rows])))
    m = svm(data.centred, liked, collection, 0.02)
    out["SVM [0.5 centred MiniLM, TF-IDF] C=0.02 + shared authors"] = (
        plus(lambda rows, m=m: m.decision_function(data.centred[rows])))
    y = np.r_[np.ones(len(liked)), np.zeros(len(collection))]
    for c in (1.0, 10.0):
        m = LogisticRegression(C=c, class_weight="balanced", max_iter=2000).fit(X[liked + collection], y)
        out[f"logistic regression [0.5 MiniLM, TF-IDF] C={c} + shared authors"] = (
            plus(lambda rows, m=m: m.decision_function(X[rows])))
    # The authors' other papers: their mean standardised SVM score.
    everyone = sorted(set(data.pool) | set(data.day_rows))
    s = z(first.decision_function(X[everyone]))
    score_of = dict(zip(everyone, s))
    for beta in (0.25, 0.5):
        out[f"SVM [0.5 MiniLM, TF-IDF] C=0.02 + shared authors + {beta} x the authors' other papers' score"] = (
            lambda rows, b=beta: z(first.decision_function(X[rows])) + by(rows)
            + b * author_smoothing(data, rows, score_of))
    # The scale and cost chosen per tag, by a 4-fold CV over its own liked
    # papers and the collection (held-out liked ranked among held-out
    # collection papers, average precision).
    scale, c = per_tag_choice(data, liked, collection)
    Xs = data.scaled.get(scale, data.both)
    m = svm(Xs, liked, collection, c)
    out["SVM [s MiniLM, TF-IDF], s and C chosen per tag by CV over its own papers + shared authors"] = (
        plus(lambda rows, m=m: m.decision_function(Xs[rows])))
    for name, Xw in data.papers_scaled.items():
        background = collection[:: max(1, len(collection) // SAMPLE)][:SAMPLE]
        words = data.papers_words[name]
        for c in (0.02, 0.05):
            m = svm(Xw, liked, collection, c)
            out[f"SVM [0.5 MiniLM, papers-like {name}] C={c} + shared authors"] = (
                plus(lambda rows, m=m, Xw=Xw: m.decision_function(Xw[rows])))
        out[f"Rocchio, meaning + papers-like {name}"] = rocchio(data, liked, disliked, background, words)


def smooth(data, rows, s, k, beta):
    v = data.vecs[rows]
    sim = v @ v.T
    np.fill_diagonal(sim, -np.inf)
    nbrs = np.argpartition(-sim, k, axis=1)[:, :k]
    return s + beta * s[nbrs].mean(1)


def write_draws(data, categories, seeds, path):
    """Every draw and the days, by arXiv id, for `cargo bench --bench feed_cv`."""
    draws = []
    for category in categories:
        for seed in seeds:
            liked, disliked, collection = draw(data, category, seed)
            ids = lambda rows: [IDS[r] for r in rows]
            draws.append({"category": category, "seed": seed, "liked": ids(liked),
                          "disliked": ids(disliked), "collection": ids(collection)})
    Path(path).write_text(json.dumps({"draws": draws, "days": [[IDS[r] for r in d] for d in data.days]}))


def papers_scorers(papers, category, seed, data):
    """papers' rankers of one draw, as candidates: the day's rows -> the
    scores the bench gave that day."""
    scores = papers[(category, seed)]
    day_of = {tuple(d): i for i, d in enumerate(data.days)}
    return {f"papers: {name}": (lambda rows, days=days: np.asarray(days[day_of[tuple(rows)]]))
            for name, days in scores.items()}


def evaluate(data, categories, seeds, papers=None):
    """(category, seed) -> name -> [(MAP, nDCG@10) per day]."""
    results = {}
    for category in categories:
        for seed in seeds:
            liked, disliked, collection = draw(data, category, seed)
            candidates = scorers(data, liked, disliked, collection)
            if papers is not None:
                candidates.update(papers_scorers(papers, category, seed, data))
            per = {}
            for name, score in candidates.items():
                rows_scores = []
                for day in data.days:
                    relevant = np.array([data.has(r, category) for r in day])
                    if not relevant.any():
                        continue
                    s = score(day)
                    order = np.lexsort((np.arange(len(day)), -s))
                    ranked = relevant[order]
                    rows_scores.append((average_precision(ranked), ndcg10(list(ranked))))
                per[name] = rows_scores
            results[(category, seed)] = per
    return results


def mean_of(results, keys, name, k=0):
    values = [v[k] for key in keys for v in results[key][name]]
    return float(np.mean(values)) if values else float("nan")


def main(index, meta_path, seeds, draws=None, papers=None):
    global IDS
    started = time.time()
    meta, IDS, vecs, texts, authors = load(index, meta_path)
    data = Data(meta, IDS, vecs, texts, authors)
    counts = {}
    for r in data.pool:
        for c in data.labels[IDS[r]]:
            counts.setdefault(c, [0, 0])[0] += 1
    for r in data.day_rows:
        for c in data.labels[IDS[r]]:
            counts.setdefault(c, [0, 0])[1] += 1
    eligible = sorted(c for c, (p, d) in counts.items() if p >= LIKED and d >= 10)
    aside = [c for c in eligible if int(hashlib.sha256(c.encode()).hexdigest(), 16) % 4 == 0]
    tuning = [c for c in eligible if c not in aside]
    folds = [tuning[i::5] for i in range(5)]
    if draws:
        write_draws(data, eligible, seeds, draws)
        print(f"{len(eligible)} categories x {len(seeds)} seeds: draws written to {draws}")
        return
    if papers:
        papers = {(r["category"], r["seed"]): r["scores"] for r in json.loads(Path(papers).read_text())}
    print(f"{len(eligible)} eligible categories: {len(tuning)} in five folds, {len(aside)} kept aside; seeds {seeds}")
    results = evaluate(data, eligible, seeds, papers)
    names = list(next(iter(results.values())).keys())
    keys = lambda cats: [(c, s) for c in cats for s in seeds]

    # Nested CV: choose on four folds, score on the fifth.
    fold_scores = []
    for i, fold in enumerate(folds):
        train = [c for j, f in enumerate(folds) if j != i for c in f]
        best = max(names, key=lambda n: mean_of(results, keys(train), n))
        base = "SVM [MiniLM, TF-IDF] vs collection C=0.01"
        fold_scores.append((best, mean_of(results, keys(fold), best), mean_of(results, keys(fold), base)))
        print(f"fold {i + 1}: chose {best!r}: MAP {fold_scores[-1][1]:.4f} (the SVM baseline {fold_scores[-1][2]:.4f})")
    chosen_maps = np.array([s[1] for s in fold_scores])
    base_maps = np.array([s[2] for s in fold_scores])
    diff = chosen_maps - base_maps
    print(f"nested CV: chosen {chosen_maps.mean():.4f} ± {chosen_maps.std(ddof=1):.4f}, "
          f"SVM baseline {base_maps.mean():.4f} ± {base_maps.std(ddof=1):.4f}, "
          f"difference {diff.mean():+.4f} ± {diff.std(ddof=1):.4f} over 5 folds")

    shipped = [n for n in names if n.startswith("papers: ") and n.endswith("(chosen)")]
    for n in shipped:
        own = np.array([mean_of(results, keys(f), n) for f in folds])
        d = own - base_maps
        print(f"{n!r} (fixed, not chosen per fold): {own.mean():.4f} ± {own.std(ddof=1):.4f}, "
              f"difference to the SVM baseline {d.mean():+.4f} ± {d.std(ddof=1):.4f} over the 5 folds; "
              f"kept aside {mean_of(results, keys(aside), n):.4f} against "
              f"{mean_of(results, keys(aside), base):.4f}")

    final = max(names, key=lambda n: mean_of(results, keys(tuning), n))
    print(f"\nchosen on all {len(tuning)} tuning categories: {final!r}\n")
    print("| ranker | tuning MAP | tuning nDCG@10 | kept aside MAP | kept aside nDCG@10 |")
    print("|---|---:|---:|---:|---:|")
    for n in sorted(names, key=lambda n: -mean_of(results, keys(tuning), n)):
        print(f"| {n}{' (chosen)' if n == final else ''} | {mean_of(results, keys(tuning), n):.4f} | "
              f"{mean_of(results, keys(tuning), n, 1):.4f} | {mean_of(results, keys(aside), n):.4f} | "
              f"{mean_of(results, keys(aside), n, 1):.4f} |")
    print(f"\n({time.time() - started:.0f} s)")


if __name__ == "__main__":
    args, options = [], {}
    rest = iter(sys.argv[1:])
    for a in rest:
        if a in ("--draws", "--papers"):
            options[a[2:]] = next(rest)
        else:
            args.append(a)
    seeds = list(range(int(args[2]) if len(args) > 2 else 2))
    main(args[0], args[1], seeds, **options)
