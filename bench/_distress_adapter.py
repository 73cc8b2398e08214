"""A low-rank adapter on the sentence model's top layer, against the shipped head, out of fold
(docs/benchmarks.md, distress, "Levers for ordinary entries"). An experiment, not shipped:

    python bench/_distress_adapter.py cache                # layer-5 states of every training text
    python bench/_distress_adapter.py fold K SEED base     # the shipped head without group K
    python bench/_distress_adapter.py fold K SEED lora     # then layer 6's adapter with it
    python bench/_distress_adapter.py fold K SEED control  # then the head alone, as long
    python bench/_distress_adapter.py curve base:0 lora:0  # each run's three groups together

``cache`` reads each training text (the training writers' entries, the bank, the everyday
sentences) once: its layer-5 word-piece states in half precision, special pieces included
(layer 6 attends to them), and its sentences' vectors as ``semantic.read_texts`` gives them.
``fold`` trains the shipped head (``training.train``) on the training writers outside group K
(``distress.FOLDS``) and, for ``lora``, trains on top of it, for ``EPOCHS`` more epochs and with
the same loss, the head together with a rank-R adapter (B A, B starting at zero) on layer 6's
query, value, attention output and both feed-forward products; layer 6 is run over the cached
layer-5 states, so the sentences' layer-6 block moves with the adapter while layers 2 and 4
stay as they were. ``control`` is the same without the adapter (the head trained as long).
The group is then read by the result and ``curve`` gives, from the three groups' readings
(the entry reading fitted out of fold as in ``choosing.entry_chances``), indirect signs caught
at ordinary entries flagged at most 2, 3, 5 and 10%, and what the threshold rule picks.
Each ``fold`` runs on one thread (several can run at once); a ``lora`` run took 12 to 20
minutes on the shared machine. ``--rank`` sets R (4).
"""

from __future__ import annotations

import argparse
import math
import os
import pickle
import sys
import time
from pathlib import Path
from typing import Any

import distress  # sets Django up and gives the training writers and their folds
import numpy as np

from agent.safety import choosing, semantic, training
from agent.safety.patterns import explicit_match

WORK = Path(os.environ.get("DISTRESS_ADAPTER_WORK", "/tmp/dx"))  # the cache and each run
EPOCHS = 2  # of the adapter, after the head's own training
LR_HEAD, LR_ADAPTER = 5e-4, 2e-3
HEADS, PER_HEAD, WIDTH = 12, 32, 384
TARGETS = {  # the adapted products of layer 6: (name, in, out)
    "q": ("attention.self.query", WIDTH, WIDTH),
    "v": ("attention.self.value", WIDTH, WIDTH),
    "o": ("attention.output.dense", WIDTH, WIDTH),
    "i": ("intermediate.dense", WIDTH, 4 * WIDTH),
    "f": ("output.dense", 4 * WIDTH, WIDTH),
}


def cache() -> None:
    from legacymind.providers.embeddings import local_provider
    from legacymind.providers.embeddings.local import TokenReading

    items = distress.training_items()
    statements, classes = training.bank_statements()
    texts = [i["text"] for i in items] + statements
    embedder = local_provider()
    order = np.argsort([len(t) for t in texts])
    data: list[dict[str, Any]] = [{}] * len(texts)
    for first in range(0, len(order), 32):
        chunk = order[first : first + 32]
        run = embedder.windows([texts[i] for i in chunk])
        owner, offsets, mask, keep = run.owner, run.offsets, run.mask, run.keep
        h = {n: run.hidden[n].float().numpy() for n in (2, 4, 5, 6)}
        for j, i in enumerate(chunk):
            rows = [r for r, o in enumerate(owner) if o == j]
            sizes = [int(mask[r].sum()) for r in rows]
            pieces = np.concatenate(
                [np.vstack([h[n][r][keep[r]] for r in rows]) for n in semantic.LAYERS], axis=-1
            )
            spans = np.vstack([offsets[r][keep[r]] for r in rows])
            reading = TokenReading(pieces, spans, np.zeros(WIDTH, np.float32))
            parts = semantic.spans(texts[i]) if i < len(items) else []
            members = [
                np.flatnonzero((spans[:, 0] >= a) & (spans[:, 1] <= b)).astype(np.int32)
                for a, b in parts
            ]
            data[i] = {
                "windows": [
                    h[5][r, :n].astype(np.float16) for r, n in zip(rows, sizes, strict=True)
                ],
                "kept": np.flatnonzero(
                    np.concatenate([keep[r, :n] for r, n in zip(rows, sizes, strict=True)])
                ),
                "members": [m for m in members if len(m)],
                "sentences": semantic.pool(reading, parts)
                if parts
                else np.zeros((0, semantic.DIM), np.float32),
                "whole": semantic.pool(reading, [(0, len(texts[i]))])[0],
            }
    WORK.mkdir(exist_ok=True)
    store = {"items": items, "classes": classes, "data": data, "entries": len(items)}
    (WORK / "h5cache.pkl").write_bytes(pickle.dumps(store, protocol=5))


class Layer6:
    """Layer 6 of the sentence model over cached layer-5 states, with an optional adapter."""

    def __init__(self, rank: int, seed: int) -> None:
        import torch

        from legacymind.providers.embeddings import local_provider

        layer = local_provider()._load()[0].auto_model.encoder.layer[5]
        self.w = {k: v.detach().float().clone() for k, v in layer.state_dict().items()}
        generator = torch.Generator().manual_seed(1000 + seed)
        self.adapter: dict[str, tuple[Any, Any]] = {}
        for key, (_, fan_in, fan_out) in TARGETS.items() if rank else ():
            a = torch.randn(rank, fan_in, generator=generator) / math.sqrt(fan_in)
            self.adapter[key] = (a.requires_grad_(), torch.zeros(fan_out, rank, requires_grad=True))

    def product(self, x: Any, key: str) -> Any:
        name = TARGETS[key][0] if key in TARGETS else "attention.self.key"
        y = x @ self.w[f"{name}.weight"].T + self.w[f"{name}.bias"]
        if key in self.adapter:
            a, b = self.adapter[key]
            y = y + (x @ a.T) @ b.T
        return y

    def __call__(self, x: Any, sizes: list[int]) -> Any:
        """(pieces, WIDTH) of consecutive windows of ``sizes`` pieces -> the same, one layer on."""
        import torch
        from torch.nn import functional
        from torch.nn.utils.rnn import pad_sequence

        def heads(t: Any) -> Any:
            padded = pad_sequence(list(torch.split(t, sizes)), batch_first=True)
            return padded.view(len(sizes), -1, HEADS, PER_HEAD).transpose(1, 2)

        q, k, v = (heads(self.product(x, key)) for key in ("q", "k", "v"))
        mask = torch.arange(q.shape[2])[None, :] < torch.tensor(sizes)[:, None]
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(PER_HEAD)
        scores = scores.masked_fill(~mask[:, None, None, :], torch.finfo(scores.dtype).min)
        context = (scores.softmax(-1) @ v).transpose(1, 2).reshape(len(sizes), -1, WIDTH)[mask]
        w = self.w

        def norm(t: Any, name: str) -> Any:
            return functional.layer_norm(t, (WIDTH,), w[f"{name}.weight"], w[f"{name}.bias"], 1e-12)

        a = norm(self.product(context, "o") + x, "attention.output.LayerNorm")
        return norm(
            self.product(functional.gelu(self.product(a, "i")), "f") + a, "output.LayerNorm"
        )

    def rows(self, data: list[dict[str, Any]], texts: list[int], sentences: bool = True) -> Any:
        """Each text's sentences (``sentences``) and then the whole text, as the head reads
        them: layers 2 and 4 as cached, layer 6 from this layer."""
        import torch

        windows, sizes, row_of, piece_of, counts, lower = [], [], [], [], [], []
        offset = 0
        for t in texts:
            d = data[t]
            kept = d["kept"] + offset
            windows += d["windows"]
            sizes += [len(w) for w in d["windows"]]
            offset += sum(len(w) for w in d["windows"])
            for m in ([*d["members"]] if sentences else []) + [np.arange(len(d["kept"]))]:
                row_of.append(np.full(len(m), len(counts)))
                piece_of.append(kept[m])
                counts.append(len(m))
            if sentences:
                lower.append(d["sentences"][:, : 2 * WIDTH])
            lower.append(d["whole"][None, : 2 * WIDTH])
        out = self(torch.from_numpy(np.vstack(windows).astype(np.float32)), sizes)
        rows = torch.from_numpy(np.concatenate(row_of))
        pooled = (
            torch.zeros(len(counts), WIDTH).index_add(
                0, rows, out[torch.from_numpy(np.concatenate(piece_of))]
            )
            / torch.tensor(counts, dtype=torch.float32)[:, None]
        )
        pooled = pooled / pooled.norm(dim=1, keepdim=True).clamp_min(1e-12)
        return torch.cat([torch.from_numpy(np.vstack(lower)), pooled], dim=1)


def load() -> tuple[dict[str, Any], list[training.Example]]:
    store = pickle.loads((WORK / "h5cache.pkl").read_bytes())
    entries = [
        training.Example(
            i["writer"], i["label"], i["category"], d["sentences"], d["whole"], i["text"]
        )
        for i, d in zip(store["items"], store["data"], strict=False)
    ]
    return store, entries


def fold(k: int, seed: int, mode: str, rank: int) -> None:
    import torch
    from torch.nn import functional

    torch.set_num_threads(1)
    store, entries = load()
    data = store["data"]
    held = np.array([i for i, e in enumerate(entries) if e.writer in distress.FOLDS[k]])
    ours = np.array(
        [i for i in np.setdiff1d(np.arange(len(entries)), held) if len(entries[i].vectors)]
    )
    head_path = WORK / f"head_{k}_{seed}.pkl"
    if head_path.exists():
        base = pickle.loads(head_path.read_bytes())
    else:
        base = training.train([entries[i] for i in ours], seed)
        head_path.write_bytes(pickle.dumps(base))
    layer = Layer6(rank if mode == "lora" else 0, seed)
    model, started = base, time.time()
    if mode != "base":
        classes = training.class_names(tuple(store["classes"]))
        index = {c: n for n, c in enumerate(classes)}
        bank = np.arange(store["entries"], len(data))
        bank_y = torch.tensor([index[c] for c in store["classes"]])
        counts = np.bincount(bank_y.numpy(), minlength=len(classes)) + 1
        class_weight = torch.tensor(counts.sum() / counts / len(classes), dtype=torch.float32)
        train = [entries[i] for i in ours]
        sign = torch.tensor([e.sign for e in train], dtype=torch.float32)
        safe_weight = float(sign.sum() / (1 - sign).sum())
        target = torch.tensor([index[e.target] for e in train])
        torch.manual_seed(seed)
        rng = np.random.default_rng(seed + 7)
        head, hidden, out = training._head(len(classes))
        with torch.no_grad():
            for layer_, w, b in (
                (hidden, base.hidden_weights, base.hidden_bias),
                (out, base.out_weights, base.out_bias),
            ):
                layer_.weight.copy_(torch.from_numpy(w.T.copy()))
                layer_.bias.copy_(torch.from_numpy(b))
        groups = [
            {
                "params": list(head.parameters()),
                "lr": LR_HEAD,
                "weight_decay": training.WEIGHT_DECAY,
            }
        ]
        if layer.adapter:
            adapter = [p for pair in layer.adapter.values() for p in pair]
            groups.append({"params": adapter, "lr": LR_ADAPTER, "weight_decay": 0.0})
        optimiser = torch.optim.AdamW(groups)
        head.train()
        for _ in range(EPOCHS):
            order = rng.permutation(len(train))
            for first in range(0, len(order), training.BATCH):
                batch = order[first : first + training.BATCH]
                if layer.adapter:
                    x = layer.rows(data, [int(ours[b]) for b in batch])
                else:
                    x = torch.from_numpy(np.vstack([train[b].rows for b in batch]))
                size = np.array([len(train[b].vectors) + 1 for b in batch])
                logits = head(x)
                loss = training.entry_loss(logits, size, sign[batch], target[batch], safe_weight)
                drawn = rng.choice(len(bank), size=training.BANK_BATCH, replace=False)
                if layer.adapter:
                    bx = layer.rows(data, [int(bank[j]) for j in drawn], sentences=False)
                else:
                    bx = torch.from_numpy(np.vstack([data[bank[j]]["whole"] for j in drawn]))
                loss = loss + functional.cross_entropy(head(bx), bank_y[drawn], weight=class_weight)
                optimiser.zero_grad()
                loss.backward()
                optimiser.step()
        head.eval()
        model = training._shipped(hidden, out, classes)
        with torch.no_grad():  # rounded to the half precision it would ship in
            for a, b in layer.adapter.values():
                a.copy_(a.half().float())
                b.copy_(b.half().float())
    seconds = time.time() - started
    features, categories = {}, {}
    for i in held:
        e = entries[i]
        if not len(e.vectors):
            continue
        if layer.adapter:
            with torch.no_grad():
                rows = layer.rows(data, [int(i)]).numpy()
            e = training.Example(e.writer, e.label, e.category, rows[:-1], rows[-1], e.text)
        features[int(i)] = semantic.entry_features(model, model.logits(e.rows), e.text)
        categories[int(i)] = choosing.read(model, e)[1]
    result = {"features": features, "categories": categories, "seconds": seconds}
    (WORK / f"oof_{mode}_{k}_{seed}.pkl").write_bytes(pickle.dumps(result))


def curve(runs: list[str]) -> None:
    store, entries = load()
    items = store["items"]
    explicit = np.array([explicit_match(i["text"]) is not None for i in items])
    labels = np.array([e.label for e in entries])
    ordinary, indirect = labels == "ordinary", labels == "indirect"
    print("run       caught at ordinary <= 2% 3% 5% 10%   the rule's threshold")
    for run in runs:
        mode, seed = run.rsplit(":", 1)
        features: list[np.ndarray | None] = [None] * len(entries)
        categories: list[str | None] = [None] * len(entries)
        for k in range(len(distress.FOLDS)):
            result = pickle.loads((WORK / f"oof_{mode}_{k}_{seed}.pkl").read_bytes())
            for i, f in result["features"].items():
                features[i], categories[i] = f, result["categories"][i]
        held = [
            np.array([i for i, e in enumerate(entries) if e.writer in g]) for g in distress.FOLDS
        ]
        chances, _ = choosing.entry_chances(entries, choosing.OutOfFold(features, categories, held))
        # The most caught with at most the bound's share of ordinary entries flagged: every
        # chance above the ordinary entries' own at that rank (explicit ones are always flagged).
        safe = np.sort(chances[ordinary & ~explicit])[::-1]
        caught = []
        for bound in (0.02, 0.03, 0.05, 0.10):
            rank = int(bound * ordinary.sum()) - int((ordinary & explicit).sum())
            flagged = explicit | (chances > safe[rank])
            caught.append(f"{flagged[indirect].mean():.3f}")
        urgent = np.array([c in semantic.URGENT for c in categories])
        params = choosing.thresholds(entries, chances, urgent, explicit)
        flagged = explicit | (chances >= params.concern)
        print(
            f"{run:10s} {' '.join(caught)}   {params.concern:.2f}: caught "
            f"{flagged[indirect].mean():.3f}, ordinary {flagged[ordinary].mean():.3f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("step", choices=("cache", "fold", "curve"))
    parser.add_argument("args", nargs="*")
    parser.add_argument("--rank", type=int, default=4)
    options = parser.parse_args()
    if options.step == "cache":
        cache()
    elif options.step == "fold":
        k, seed, mode = options.args
        fold(int(k), int(seed), mode, options.rank)
    else:
        curve(options.args)


if __name__ == "__main__":
    sys.exit(main())
