"""Single texts embedded at the same moment from several threads go to the model as one batch.

A gunicorn worker's threads each embed one text per think. With the local model, sixteen
threads embedding a text each took ~20 ms of CPU a text; taken together in batches (8-9 texts
on average) ~11 ms, and 1.8x as many texts a second (docs/benchmarks.md). Nothing waits to
gather a batch: a thread that finds the model free embeds at once whatever is queued,
its own text included; threads that arrive meanwhile queue, and one of them takes the next
batch when the model is free again. Alone, a text goes straight through.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from legacymind.providers.embeddings.base import EmbeddingError


@dataclass
class _Slot:
    text: str
    vector: np.ndarray | None = None
    error: BaseException | None = None
    done: bool = False


class Coalescer:
    """Calls ``embed`` (texts -> one row per text) for batches of the texts that ``one`` is
    given by threads at the same time, at most ``max_batch`` a call."""

    def __init__(self, embed: Callable[[list[str]], np.ndarray], *, max_batch: int) -> None:
        self._embed = embed
        self.max_batch = max_batch
        self._cond = threading.Condition()
        self._queue: list[_Slot] = []
        self._busy = False  # a thread is embedding a batch

    def one(self, text: str) -> np.ndarray:
        """``text``'s row, embedded alone or in a batch with other threads' texts; an error of
        its batch is raised in every thread that had a text in it."""
        slot = _Slot(text)
        with self._cond:
            self._queue.append(slot)
        while True:
            with self._cond:
                while self._busy and not slot.done:
                    self._cond.wait()
                if slot.done:
                    break
                # The model is free and this text still waits: take the queue, oldest first.
                self._busy = True
                batch = self._queue[: self.max_batch]
                del self._queue[: len(batch)]
            self._run(batch)
        if slot.error is not None:
            raise slot.error
        assert slot.vector is not None
        return slot.vector

    def _run(self, batch: list[_Slot]) -> None:
        vectors: np.ndarray | None = None
        error: BaseException | None = None
        try:
            vectors = self._embed([slot.text for slot in batch])
        except BaseException as exc:  # every caller of the batch gets it, then it is raised
            error = exc
        if vectors is not None and len(vectors) != len(batch):
            error = EmbeddingError(f"{len(vectors)} vectors came back for {len(batch)} texts")
            vectors = None
        # Ctrl-C or an exit stops the thread it reached; the batch's other threads get an error.
        shared = error if error is None or isinstance(error, Exception) else _interrupted()
        with self._cond:
            for i, slot in enumerate(batch):
                slot.vector = vectors[i] if vectors is not None else None
                slot.error, slot.done = shared, True
            self._busy = False
            self._cond.notify_all()
        if error is not None and shared is not error:
            raise error


def _interrupted() -> EmbeddingError:
    return EmbeddingError("the batch this text was in was interrupted; nothing was embedded")
