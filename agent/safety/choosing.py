"""What is chosen on out-of-fold readings of the sentence head (``bench/distress.py --fit``):
the entry reading, the threshold and the risk bar; nothing here runs in a request.

Each group of training writers (``folds``) is read by a head trained without it
(``training.train``), as an unseen writer's entries would be (``out_of_fold``). **The entry
reading** (``semantic.Entry``) is fitted on those readings (``fit_entry``); **the threshold**
on chances from entry readings fitted without the entry's group (``entry_chances``,
``thresholds``); then, on the same chances, **the risk bar**, the higher chance at which a
detection of an urgent category is a risk (``risk_bar``). With ``lexical``, the lexical
reader (``agent.safety.lexical``) is fitted on the same folds (``lexical_out_of_fold``): its
out-of-fold score is the entry reading's last feature. ``fit`` does all of it and trains the
shipped head (and lexical reader) on every training writer beside the out-of-fold ones.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from agent.safety.lexical import Lexical, vocabulary
from agent.safety.semantic import URGENT, Entry, Model, Params, entry_features, judge
from agent.safety.training import NEGATIVE, SEED, Example, train

ENTRY_PENALTY = 1.0  # the entry reading's L2 penalty on its (standardised) weights
# The lexical reader's inverse L2 penalty, compared out of fold on the training writers (area
# under the curve 0.948 at 3, 0.950 at 10 and 30).
LEXICAL_C = 10.0


def folds(entries: list[Example], groups: tuple[tuple[str, ...], ...] = ()) -> list[np.ndarray]:
    """One fold per group of writers in ``groups`` and one per writer in none (an unseen
    writer is what the figures must hold on), or five random folds when there is a single
    writer."""
    writers = sorted({e.writer for e in entries})
    if len(writers) <= 1:
        order = np.random.default_rng(0).permutation(len(entries))
        return [order[k::5] for k in range(5)]
    grouped = [set(g) & set(writers) for g in groups]
    grouped = [g for g in grouped if g]
    alone = [{w} for w in writers if not any(w in g for g in grouped)]
    return [np.array([i for i, e in enumerate(entries) if e.writer in g]) for g in grouped + alone]


def read(m: Model, entry: Example) -> tuple[float, str | None]:
    """An entry's chance of a sign and its category, as ``semantic.read`` reads it."""
    if not len(entry.vectors):
        return 0.0, None
    return judge(m, entry.vectors, entry.whole, entry.text)


_POOL_ENTRIES: list[Example] = []


def _pool_start(entries: list[Example]) -> None:
    _POOL_ENTRIES[:] = entries


def _pool_train(args: tuple[np.ndarray, int]) -> Model:
    others, seed = args
    return train([_POOL_ENTRIES[i] for i in others], seed)


@dataclass
class OutOfFold:
    """Each entry as a head trained without its fold reads it: the head's chance (the entry
    reading's features' ``top``), its category, and the entry reading's features (None for an
    entry with nothing to read); and the folds."""

    features: list[np.ndarray | None]
    categories: list[str | None]
    held_out: list[np.ndarray]


def out_of_fold(
    entries: list[Example],
    seed: int,
    workers: int = 1,
    groups: tuple[tuple[str, ...], ...] = (),
    full: bool = False,
) -> tuple[OutOfFold, Model | None]:
    """Each entry read by a head trained without its fold (``folds``), and with ``full`` the
    head trained on every entry, trained beside them. The heads are independent and each is
    trained on one thread with its own seed, so ``workers`` processes give the same heads as
    one, sooner."""
    held_out = folds(entries, groups)
    jobs = [(np.setdiff1d(np.arange(len(entries)), held), seed) for held in held_out]
    if full:
        jobs.insert(0, (np.arange(len(entries)), seed))
    if workers > 1:
        import multiprocessing

        # spawn, not fork: the parent has run torch's OpenMP pool, which a forked child can
        # deadlock on.
        context = multiprocessing.get_context("spawn")
        with context.Pool(workers, initializer=_pool_start, initargs=(entries,)) as pool:
            heads = pool.map(_pool_train, jobs, chunksize=1)
    else:
        heads = [train([entries[i] for i in others], s) for others, s in jobs]
    whole = heads.pop(0) if full else None
    features: list[np.ndarray | None] = [None] * len(entries)
    categories: list[str | None] = [None] * len(entries)
    for held, head in zip(held_out, heads, strict=True):
        for i in held:
            entry = entries[i]
            if len(entry.vectors):
                features[i] = entry_features(head, head.logits(entry.rows), entry.text)
                categories[i] = read(head, entry)[1]
    return OutOfFold(features, categories, held_out), whole


def fit_lexical(texts: list[str], sign: np.ndarray) -> Lexical:
    """The lexical reader on ``texts``: its vocabulary, and a logistic regression of the sign
    on their TF-IDF vectors, the two labels weighted alike (scikit-learn, which
    sentence-transformers brings; only here, never in a request)."""
    from scipy.sparse import csr_matrix
    from sklearn.linear_model import LogisticRegression

    index, idf = vocabulary(texts)
    reader = Lexical(index, idf, np.zeros(len(idf)), 0.0)
    rows, cols, values = [], [], []
    for r, text in enumerate(texts):
        c, v = reader.columns(text)
        rows.append(np.full(len(c), r))
        cols.append(c)
        values.append(v)
    x = csr_matrix(
        (np.concatenate(values), (np.concatenate(rows), np.concatenate(cols))),
        shape=(len(texts), len(idf)),
    )
    model = LogisticRegression(C=LEXICAL_C, class_weight="balanced", max_iter=3000)
    model.fit(x, sign)
    weights = model.coef_[0].astype(np.float32)
    return Lexical(index, idf.astype(np.float32), weights, float(model.intercept_[0])).rounded()


def lexical_out_of_fold(entries: list[Example], held_out: list[np.ndarray]) -> np.ndarray:
    """Each entry's lexical score from a reader fitted without its fold."""
    scores = np.zeros(len(entries))
    sign = np.array([e.sign for e in entries])
    for held in held_out:
        others = np.setdiff1d(np.arange(len(entries)), held)
        reader = fit_lexical([entries[i].text for i in others], sign[others])
        scores[held] = [reader.score(entries[i].text) for i in held]
    return scores


def with_lexical(oof: OutOfFold, scores: np.ndarray) -> OutOfFold:
    """``oof`` with each entry's out-of-fold lexical score as one more feature, the last."""
    features = [
        None if f is None else np.append(f, np.float32(s))
        for f, s in zip(oof.features, scores, strict=True)
    ]
    return OutOfFold(features, oof.categories, oof.held_out)


def fit_entry(features: np.ndarray, sign: np.ndarray) -> Entry:
    """The entry reading: a logistic regression of the sign on the standardised features, the
    two labels weighted alike, with an L2 penalty (ENTRY_PENALTY) on the weights; fitted by
    Newton's method (deterministic, no library)."""
    centre = features.mean(axis=0)
    scale = features.std(axis=0)
    scale = np.where(scale > 1e-6, scale, 1.0)
    x = np.hstack([(features - centre) / scale, np.ones((len(features), 1))])
    y = sign.astype(np.float64)
    weight = np.where(y > 0, 0.5 / y.mean(), 0.5 / (1 - y).mean())
    penalty = np.full(x.shape[1], ENTRY_PENALTY)
    penalty[-1] = 0.0
    beta = np.zeros(x.shape[1])
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-(x @ beta)))
        gradient = x.T @ (weight * (p - y)) + penalty * beta
        hessian = (x * (weight * p * (1 - p))[:, None]).T @ x + np.diag(penalty + 1e-9)
        step = np.linalg.solve(hessian, gradient)
        beta -= step
        if np.abs(step).max() < 1e-8:
            break
    return Entry(
        centre.astype(np.float32),
        scale.astype(np.float32),
        beta[:-1].astype(np.float32),
        beta[-1:].astype(np.float32),
    )


def entry_chances(
    entries: list[Example], oof: OutOfFold, entry: bool = True
) -> tuple[np.ndarray, Entry | None]:
    """Each entry's out-of-fold chance, and the entry reading fitted on every fold. With
    ``entry``, the chance is the entry reading's, itself fitted without the entry's fold (on
    the other folds' out-of-fold features: what an unseen writer's entry meets); without it, the
    head's own (the logistic of ``top``)."""
    readable = np.array([f is not None for f in oof.features])
    x = np.vstack([f for f in oof.features if f is not None]).astype(np.float64)
    sign = np.array([e.sign for e in entries])[readable]
    chances = np.zeros(len(entries))
    if not entry:
        chances[readable] = 1.0 / (1.0 + np.exp(-x[:, 0]))
        return chances, None
    position = np.cumsum(readable) - 1  # each readable entry's row in x
    fold_of = np.zeros(len(entries), dtype=int)
    for k, held in enumerate(oof.held_out):
        fold_of[held] = k
    rows_fold = fold_of[readable]
    for k in range(len(oof.held_out)):
        inside = rows_fold == k
        if not inside.any():
            continue
        reading = fit_entry(x[~inside], sign[~inside])
        held = np.flatnonzero(readable & (fold_of == k))
        for i in held:
            chances[i] = reading.chance(x[position[i]].astype(np.float32))
    return chances, fit_entry(x, sign)


# The false-positive bounds the threshold is chosen under, out of fold. A miss is the worst
# failure, so the threshold is the lowest that keeps dark-but-safe entries inside their targets
# (15% flagged, 5% at risk) less a margin for a writer unlike the training ones. The 2% target
# for ordinary entries cannot be met with useful recall (entries about a hard day read like a
# warning sign: docs/benchmarks.md); they are held to a bound of their own.
MAX_ORDINARY = 0.10  # ordinary entries flagged
MAX_BENIGN = 0.10  # dark-but-safe entries flagged
MAX_BENIGN_RISK = 0.04  # dark-but-safe entries at risk
# The bar for a detection by meaning to be a risk (``Params.risk``), chosen after the
# threshold: a risk stops the session and shows crisis resources to someone who may be writing
# about an ordinary worry, the worst false positive a writer sees, so ordinary and dark-but-safe
# entries at risk are held to 1% each; the lowest such bar keeps the most plans and means at
# risk. Below it an URGENT detection is a concern, so what is caught does not change.
MAX_AT_RISK = 0.01


def thresholds(
    entries: list[Example], chances: np.ndarray, urgent: np.ndarray, explicit: np.ndarray
) -> Params:
    """The lowest concern threshold (the best recall of entries with a sign) whose false
    positives stay inside the targets less a margin (MAX_ORDINARY, MAX_BENIGN,
    MAX_BENIGN_RISK), every detection of an urgent category counted as a risk (the stricter
    count: ``risk_bar`` then sets the bar above it)."""
    labels = np.array([e.label for e in entries])
    benign, ordinary = labels == "benign_dark", labels == "ordinary"
    for concern in np.round(np.arange(0.05, 1.0, 0.01), 2):
        flagged = explicit | (chances >= concern)
        at_risk = explicit | (urgent & flagged)
        if (
            flagged[ordinary].mean() <= MAX_ORDINARY
            and flagged[benign].mean() <= MAX_BENIGN
            and at_risk[benign].mean() <= MAX_BENIGN_RISK
        ):
            return Params(concern=float(concern))
    raise ValueError("no threshold keeps the false positives inside the targets")


def risk_bar(
    entries: list[Example],
    chances: np.ndarray,
    urgent: np.ndarray,
    explicit: np.ndarray,
    concern: float,
) -> float:
    """The lowest bar from ``concern`` up at which, out of fold, ordinary and dark-but-safe
    entries at risk by meaning (an URGENT category, the chance at the bar) are MAX_AT_RISK or
    fewer each. The patterns' own false hits (a dark-but-safe entry whose wording is explicit)
    are counted apart: no bar changes them."""
    labels = np.array([e.label for e in entries])
    for bar in np.round(np.arange(concern, 1.0, 0.01), 2):
        by_meaning = ~explicit & urgent & (chances >= bar)
        if all(by_meaning[labels == label].mean() <= MAX_AT_RISK for label in NEGATIVE):
            return float(bar)
    return 1.0


def fit(
    entries: list[Example],
    explicit: np.ndarray,
    workers: int = 1,
    groups: tuple[tuple[str, ...], ...] = (),
    lexical: bool = False,
) -> tuple[Model, Params, np.ndarray, list[str | None]]:
    """The shipped model (the head, its entry reading and, with ``lexical``, the lexical
    reader) and threshold, and the out-of-fold chances and categories the threshold was chosen
    on."""
    oof, head = out_of_fold(entries, SEED, workers, groups, full=True)
    assert head is not None
    return finish(entries, explicit, oof, head, lexical)


def finish(
    entries: list[Example],
    explicit: np.ndarray,
    oof: OutOfFold,
    head: Model,
    lexical: bool = False,
) -> tuple[Model, Params, np.ndarray, list[str | None]]:
    """``fit`` once the heads are trained: the lexical reader (with ``lexical``), the entry
    reading, the threshold and the bar."""
    reader = None
    if lexical:
        oof = with_lexical(oof, lexical_out_of_fold(entries, oof.held_out))
        reader = fit_lexical([e.text for e in entries], np.array([e.sign for e in entries]))
    chances, reading = entry_chances(entries, oof)
    urgent = np.array([c in URGENT for c in oof.categories])
    params = thresholds(entries, chances, urgent, explicit)
    bar = risk_bar(entries, chances, urgent, explicit, params.concern)
    params = Params(concern=params.concern, risk=bar)
    return head.with_entry(reading, reader), params, chances, oof.categories
