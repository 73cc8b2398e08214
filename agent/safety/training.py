"""How ``model.npz`` is made (``bench/distress.py --fit``); nothing here runs in a request, and
this is the only place torch is used (the shipped head runs in numpy: ``semantic.Model``).

**The sentence head** (a multilayer perceptron over each sentence's vector, one logit per
class; ``semantic`` explains how an entry is read from it) is trained in one go on:

- the bank (``bank.json``): statements per warning-sign category, and safe look-alikes, each
  its own class; everyday sentences (``neutral.json``), one class per group: cross-entropy,
  each class weighted alike;
- the training writers' entries (never the held-out writers), by multiple-instance learning:
  the entry's chance of a sign (its highest sentence score) against its label, the two labels
  weighted alike; an entry with a sign also teaches its labelled category to its
  highest-scoring sentence (the label says a sign is there, not where); every sentence of a
  dark-but-safe or ordinary entry is taught, more weakly, its entry's safe class
  (``dev:dark_but_safe``, ``dev:ordinary``, or ``dev:struggling`` for an ordinary entry about a
  hard day, which reads most like a sign without being one).

**The entry reading** (``semantic.Entry``) and **the threshold** are chosen on out-of-fold
readings: each group of training writers (``folds``) is read by a head trained without it, as
an unseen writer's entries would be (``out_of_fold``); the entry reading is fitted on those
readings (``fit_entry``), and the threshold on chances from entry readings fitted without the
entry's group (``entry_chances``, ``thresholds``), then, on the same chances, the higher bar
at which a detection of an urgent category is a risk (``risk_bar``).

Every run is seeded (``SEED``), on one thread with torch's deterministic algorithms, so a refit
gives the same weights on the same kind of machine.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from agent.safety.semantic import (
    CATEGORIES,
    DIM,
    SAFE_ENTRY_CLASSES,
    URGENT,
    Entry,
    Model,
    Params,
    embed_whole,
    entry_features,
    judge,
)

if TYPE_CHECKING:
    import torch

HERE = Path(__file__).parent
STRUGGLING, ORDINARY, DARK = SAFE_ENTRY_CLASSES
NEGATIVE = {"benign_dark": DARK, "ordinary": ORDINARY}
SIGN = ("indirect", "explicit")
# The head and its training (compared out of fold on the training writers only).
HIDDEN = 256
DROPOUT_INPUT = 0.1
DROPOUT_HIDDEN = 0.3
EPOCHS = 30
BATCH = 32  # entries per step
BANK_BATCH = 64  # bank statements per step
LEARNING_RATE = 2e-3
WEIGHT_DECAY = 1e-3
CATEGORY_WEIGHT = 0.5  # the category terms of the entries, against their sign term
SAFE_SENTENCE_WEIGHT = 0.3  # a safe entry's sentences, against a signed entry's top sentence
SEED = 0  # fixed, not chosen: other seeds move the figures a little (docs/benchmarks.md)
ENTRY_PENALTY = 1.0  # the entry reading's L2 penalty on its (standardised) weights


@dataclass
class Example:
    """One training entry: who wrote it, its label and category, its sentences' vectors."""

    writer: str
    label: str
    category: str
    vectors: np.ndarray  # its sentences
    whole: np.ndarray  # the entry read as one sentence

    @property
    def sign(self) -> bool:
        return self.label in SIGN

    @property
    def target(self) -> str:
        """The class its sentences are taught (the top one only, for an entry with a sign)."""
        if self.sign:
            return self.category if self.category in CATEGORIES else "explicit"
        if self.label == "ordinary" and self.category != "ordinary":
            return STRUGGLING
        return NEGATIVE[self.label]

    @property
    def rows(self) -> np.ndarray:
        """What the head reads: the sentences, then the whole entry."""
        return np.vstack([self.vectors, self.whole[None, :]]).astype(np.float32)


@lru_cache(maxsize=1)
def bank_examples() -> tuple[np.ndarray, tuple[str, ...]]:
    """The bank's and the everyday sentences' vectors and classes."""
    bank = json.loads((HERE / "bank.json").read_text(encoding="utf-8"))
    neutral = json.loads((HERE / "neutral.json").read_text(encoding="utf-8"))["neutral"]
    texts: list[str] = []
    labels: list[str] = []
    for category in CATEGORIES:
        texts += bank["risk"][category]
        labels += [category] * len(bank["risk"][category])
    for prefix, groups in (("safe", bank["safe"]), ("neutral", neutral)):
        for group, statements in groups.items():
            texts += statements
            labels += [f"{prefix}:{group}"] * len(statements)
    return embed_whole(texts), tuple(labels)


def class_names(bank_labels: tuple[str, ...]) -> tuple[str, ...]:
    safe = sorted({c for c in bank_labels if c not in CATEGORIES})
    return (*CATEGORIES, *safe, *NEGATIVE.values(), STRUGGLING)


def _head(classes: int) -> tuple[torch.nn.Sequential, torch.nn.Linear, torch.nn.Linear]:
    """The network, and its two weighted layers."""
    from torch import nn

    hidden, out = nn.Linear(DIM, HIDDEN), nn.Linear(HIDDEN, classes)
    layers = (nn.Dropout(DROPOUT_INPUT), hidden, nn.GELU(approximate="tanh"))
    return nn.Sequential(*layers, nn.Dropout(DROPOUT_HIDDEN), out), hidden, out


def _sign_scores(logits: torch.Tensor) -> torch.Tensor:
    import torch

    n = len(CATEGORIES)
    return torch.logsumexp(logits[:, :n], 1) - torch.logsumexp(logits[:, n:], 1)


def train(entries: list[Example], seed: int) -> Model:
    """One head trained on the bank and ``entries`` (see the module's docstring), on one
    thread: the sums' order, and so the weights, would otherwise depend on the core count."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return _train(entries, seed)
    finally:
        torch.set_num_threads(threads)


class _Tensors(NamedTuple):
    classes: tuple[str, ...]
    sizes: np.ndarray  # each entry's rows
    starts: np.ndarray  # where each entry's rows start in x
    x: Any  # every entry's rows, stacked
    sign: Any  # 1 for an entry with a sign
    target: Any  # each entry's class
    bank: Any  # the statement bank's vectors
    bank_y: Any  # and their classes
    class_weight: Any  # the bank's classes weighted alike
    safe_weight: float  # the two labels counted alike


def _tensors(entries: list[Example]) -> _Tensors:
    """What the training loop reads: the entries' rows and labels and the bank, as tensors."""
    import torch

    bank_x, bank_labels = bank_examples()
    classes = class_names(bank_labels)
    index = {c: k for k, c in enumerate(classes)}
    rows = [e.rows for e in entries]
    sizes = np.array([len(r) for r in rows])
    sign = torch.tensor([e.sign for e in entries], dtype=torch.float32)
    bank_y = torch.tensor([index[c] for c in bank_labels])
    counts = np.bincount(bank_y.numpy(), minlength=len(classes)) + 1
    return _Tensors(
        classes=classes,
        sizes=sizes,
        starts=np.concatenate([[0], np.cumsum(sizes)[:-1]]),
        x=torch.from_numpy(np.vstack(rows)),
        sign=sign,
        target=torch.tensor([index[e.target] for e in entries]),
        bank=torch.from_numpy(np.asarray(bank_x, dtype=np.float32)),
        bank_y=bank_y,
        class_weight=torch.tensor(counts.sum() / counts / len(classes), dtype=torch.float32),
        safe_weight=float(sign.sum() / (1 - sign).sum()),
    )


def entry_loss(logits: Any, size: np.ndarray, y: Any, targets: Any, safe_weight: Any) -> Any:
    """The multiple-instance loss of a batch of entries, whose sentences' ``logits`` come in
    runs of ``size``: an entry's sign is its highest sentence's score, and its category is
    taught on that sentence for an entry with a sign, on every sentence (lightly) for a safe one.
    """
    import torch
    from torch.nn import functional
    from torch.nn.utils.rnn import pad_sequence

    scores = pad_sequence(
        list(torch.split(_sign_scores(logits), size.tolist())),
        batch_first=True,
        padding_value=-torch.inf,
    )
    entry_score, top = scores.max(1)
    loss = functional.binary_cross_entropy_with_logits(
        entry_score, y, weight=torch.where(y > 0, 1.0, safe_weight)
    )
    owner = torch.repeat_interleave(torch.arange(len(size)), torch.from_numpy(size))
    per_row = functional.cross_entropy(logits, targets[owner], reduction="none")
    offsets = torch.from_numpy(np.concatenate([[0], np.cumsum(size)[:-1]]))
    top_row = per_row[offsets + top]
    mean_row = torch.zeros(len(size)).index_add(0, owner, per_row) / torch.from_numpy(size).to(
        torch.float32
    )
    category = torch.where(y > 0, top_row, SAFE_SENTENCE_WEIGHT * mean_row)
    return loss + CATEGORY_WEIGHT * category.mean()


def _train(entries: list[Example], seed: int) -> Model:
    import torch
    from torch.nn import functional

    torch.manual_seed(seed)
    torch.use_deterministic_algorithms(True)
    rng = np.random.default_rng(seed)
    entries = [e for e in entries if len(e.vectors)]
    data = _tensors(entries)
    classes, sizes, starts = data.classes, data.sizes, data.starts
    x, sign, target, bank, bank_y = data.x, data.sign, data.target, data.bank, data.bank_y
    class_weight, safe_weight = data.class_weight, data.safe_weight

    head, hidden, out = _head(len(classes))
    optimiser = torch.optim.AdamW(head.parameters(), lr=LEARNING_RATE, weight_decay=WEIGHT_DECAY)
    head.train()
    for _ in range(EPOCHS):
        order = rng.permutation(len(entries))
        for first in range(0, len(order), BATCH):
            batch = order[first : first + BATCH]
            size = sizes[batch]
            picked = np.concatenate([np.arange(starts[i], starts[i] + sizes[i]) for i in batch])
            logits = head(x[picked])
            loss = entry_loss(logits, size, sign[batch], target[batch], safe_weight)
            drawn = torch.from_numpy(rng.choice(len(bank_y), size=BANK_BATCH, replace=False))
            loss = loss + functional.cross_entropy(
                head(bank[drawn]), bank_y[drawn], weight=class_weight
            )
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
    head.eval()
    return _shipped(hidden, out, classes)


def _shipped(hidden: Any, out: Any, classes: tuple[str, ...]) -> Model:
    # Rounded to the half precision it ships in: what is measured is what ships.
    def weights(tensor: Any) -> np.ndarray:
        return np.asarray(tensor.detach().numpy())

    return Model(
        weights(hidden.weight).T,
        weights(hidden.bias),
        weights(out.weight).T,
        weights(out.bias),
        classes,
    ).rounded()


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
    return judge(m, entry.vectors, entry.whole)


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
                features[i] = entry_features(head, head.logits(entry.rows))
                categories[i] = read(head, entry)[1]
    return OutOfFold(features, categories, held_out), whole


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
) -> tuple[Model, Params, np.ndarray, list[str | None]]:
    """The shipped model (the head and its entry reading) and threshold, and the out-of-fold
    chances and categories the threshold was chosen on."""
    oof, head = out_of_fold(entries, SEED, workers, groups, full=True)
    assert head is not None
    chances, reading = entry_chances(entries, oof)
    urgent = np.array([c in URGENT for c in oof.categories])
    params = thresholds(entries, chances, urgent, explicit)
    bar = risk_bar(entries, chances, urgent, explicit, params.concern)
    params = Params(concern=params.concern, risk=bar)
    return head.with_entry(reading), params, chances, oof.categories
