"""Long texts with the local model: each embedded in pieces whose weighted mean is its vector
(ours) against the model reading its first 256 word pieces and dropping the rest (the baseline:
what sentence-transformers does alone, and what the provider did before).

    python bench/long_texts.py [--entries 300] [--filler 40] [--seed 20261127]

Each synthetic journal entry opens with a sentence about one thing, goes on with ``--filler``
sentences of everyday words drawn from a pool every entry shares (~600 word pieces in all), and
closes with a sentence about another thing. For every entry two queries ask, in other words,
about its opening and about its close; recall@1 and recall@5 say how often the entry is the
first, or among the first five, of all entries by cosine similarity. Also the texts embedded a
second, each way.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _common import machine
from django.conf import settings

from legacymind.providers import embeddings

# fmt: off
DOING = [
    ("repairing", "mending"), ("painting", "putting colour on"), ("selling", "trying to sell"),
    ("photographing", "taking pictures of"), ("cleaning", "scrubbing"), ("measuring", "sizing up"),
    ("building", "putting together"), ("moving", "carrying"), ("drawing", "sketching"),
    ("insuring", "getting insurance for"),
]
THINGS = [
    ("an old piano", "a worn upright piano"), ("the sailing boat", "our small yacht"),
    ("a vintage motorbike", "an antique motorcycle"), ("the beehives", "the bee colonies"),
    ("a wedding dress", "a bridal gown"), ("the greenhouse", "the glasshouse"),
    ("a telescope", "a stargazing scope"), ("the chicken coop", "the hen house"),
    ("a grandfather clock", "a tall pendulum clock"), ("the violin", "a fiddle"),
]
PLACES = [
    ("in Lisbon", "in Portugal's capital"), ("at the harbour", "by the docks"),
    ("in the mountains", "up in the alps"), ("at my sister's farm", "on my sibling's ranch"),
    ("in the basement", "down in the cellar"), ("near the cathedral", "close to the big church"),
]
FILLER = [
    "The morning was grey and I made coffee before anyone else woke up.",
    "I answered a few messages and put the laundry on.",
    "Lunch was soup and bread, nothing special.",
    "It rained for an hour in the afternoon, then the sun came back.",
    "I walked to the shop for milk and eggs.",
    "The neighbours were talking loudly in the garden again.",
    "I read a few pages of a novel and fell asleep on the sofa.",
    "We talked about the weekend and what to cook on Sunday.",
    "The train was late, as it usually is on Tuesdays.",
    "I watered the plants on the balcony and swept the floor.",
    "There was a long queue at the post office.",
    "I wrote a shopping list and lost it within ten minutes.",
    "The radio played old songs all evening.",
    "My phone battery died halfway through the day.",
    "Dinner was pasta with whatever was left in the fridge.",
    "I stretched for a while and went to bed early.",
]
# fmt: on


def topics(rng: np.random.Generator, count: int) -> list[tuple[str, str]]:
    """``count`` distinct (statement, paraphrase) pairs."""
    combos = [(d, t, p) for d in DOING for t in THINGS for p in PLACES]
    chosen = rng.choice(len(combos), size=count, replace=False)
    out = []
    for k in chosen:
        (doing, doing2), (thing, thing2), (place, place2) = combos[k]
        out.append((f"Today I spent hours {doing} {thing} {place}.", f"{doing2} {thing2} {place2}"))
    return out


def entries(count: int, filler: int, seed: int) -> tuple[list[str], list[str], list[str]]:
    """The entries, the queries about their openings and those about their closes."""
    rng = np.random.default_rng(seed)
    pairs = topics(rng, 2 * count)
    texts, about_open, about_close = [], [], []
    for i in range(count):
        (opening, open_query), (closing, close_query) = pairs[2 * i], pairs[2 * i + 1]
        middle = " ".join(rng.choice(FILLER, size=filler))
        texts.append(f"{opening} {middle} {closing}")
        about_open.append(open_query)
        about_close.append(close_query)
    return texts, about_open, about_close


def recall(vectors: np.ndarray, queries: np.ndarray, k: int) -> float:
    ranks = np.argsort(-(queries @ vectors.T), axis=1)[:, :k]
    return float(np.mean([i in ranks[i] for i in range(len(queries))]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=300)
    parser.add_argument("--filler", type=int, default=40)
    parser.add_argument("--seed", type=int, default=20261127)
    args = parser.parse_args()
    settings.EMBEDDING_PROVIDER, settings.EMBEDDING_DIM = "local", 0
    embeddings._cached.cache_clear()
    provider = embeddings.get_provider()
    assert isinstance(provider, embeddings.LocalEmbedder)
    model = provider._load()
    texts, about_open, about_close = entries(args.entries, args.filler, args.seed)
    pieces = [len(model.tokenizer(text, add_special_tokens=False)["input_ids"]) for text in texts]
    provider.embed(texts[:8])  # warm up

    started = time.perf_counter()
    ours = provider.embed(texts)
    ours_rate = len(texts) / (time.perf_counter() - started)
    started = time.perf_counter()
    theirs = model.encode(texts, batch_size=provider.batch_size, normalize_embeddings=True)
    theirs_rate = len(texts) / (time.perf_counter() - started)
    q_open, q_close = provider.embed(about_open), provider.embed(about_close)

    print(f"# Long texts and the local model ({machine()})\n")
    print(
        f"{len(texts)} entries of {min(pieces)}-{max(pieces)} word pieces (median "
        f"{int(np.median(pieces))}); the model reads 256 at a time. Queries are paraphrases.\n"
    )
    print("| figure | ours (pieces, weighted mean) | baseline (first 256 word pieces) | ratio |")
    print("|---|---|---|---|")
    for label, queries in (("its close", q_close), ("its opening", q_open)):
        for k in (1, 5):
            mine, base = recall(ours, queries, k), recall(theirs, queries, k)
            ratio = f"{mine / base:.2f}x" if base else "-"
            print(f"| a query about {label}: recall@{k} | {mine:.3f} | {base:.3f} | {ratio} |")
    print(
        f"| entries embedded a second | {ours_rate:.1f} | {theirs_rate:.1f} | "
        f"{ours_rate / theirs_rate:.2f}x |",
        flush=True,
    )


if __name__ == "__main__":
    main()
