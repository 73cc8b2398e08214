"""Rows for the read-side tests (list, detail, chain, search), written with the ORM because the
think endpoint is a separate path. Vectors come from the configured provider (hash in tests), or
are built to have an exact cosine to the provider's vector of a query text."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import factory
import numpy as np

from kg.models import Observation
from legacymind.providers.embeddings import fields_for, get_provider
from tests.kg.factories import EntityFactory as KgEntityFactory
from tests.kg.factories import ThoughtFactory as KgThoughtFactory
from thoughts.models import Thought


def text_vector(text: str) -> np.ndarray:
    return get_provider().embed([text])[0].astype(np.float64)


def at_cosine(query: str, cosine: float, seed: int) -> np.ndarray:
    """A unit vector whose cosine to the provider's vector of ``query`` is exactly ``cosine``."""
    q = text_vector(query)
    noise = np.random.default_rng(seed).standard_normal(len(q))
    noise -= noise.dot(q) * q
    noise /= np.linalg.norm(noise)
    return (cosine * q + np.sqrt(max(0.0, 1 - cosine**2)) * noise).astype(np.float32)


_seeds = iter(range(1, 10**9))


def near(query: str, cosine: float) -> dict[str, Any]:
    """Embedding fields (vector and provenance) at ``cosine`` to ``query``."""
    return fields_for(get_provider(), at_cosine(query, cosine, next(_seeds)))


class ThoughtFactory(KgThoughtFactory):
    """A thought embedded like the think pipeline stores it, unless given embedding fields."""

    content = factory.Sequence(lambda n: f"Read-side thought number {n}.")
    mode = "question"

    @classmethod
    def _create(cls, model_class: type[Thought], *args: Any, **kwargs: Any) -> Thought:
        created_at: datetime | None = kwargs.pop("created_at", None)
        if "embedding" not in kwargs:
            provider = get_provider()
            kwargs.update(fields_for(provider, provider.embed([kwargs["content"]])[0]))
        thought = super()._create(model_class, *args, **kwargs)
        if created_at is not None:  # auto_now_add ignores a value given at creation
            Thought.objects.filter(pk=thought.pk).update(created_at=created_at)
            thought.created_at = created_at
        return thought


class EntityFactory(KgEntityFactory):
    @classmethod
    def _create(cls, model_class: Any, *args: Any, **kwargs: Any) -> Any:
        if "embedding" not in kwargs:
            provider = get_provider()
            text = f"{kwargs['name']} ({kwargs['entity_type']})"
            kwargs.update(fields_for(provider, provider.embed([text])[0]))
        return super()._create(model_class, *args, **kwargs)


class ObservationFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Observation

    name = factory.Sequence(lambda n: f"Read-side observation {n}")
    description = "noted while testing"

    @classmethod
    def _create(cls, model_class: Any, *args: Any, **kwargs: Any) -> Any:
        if "embedding" not in kwargs:
            provider = get_provider()
            text = f"{kwargs['name']} - {kwargs['description']}"
            kwargs.update(fields_for(provider, provider.embed([text])[0]))
        return super()._create(model_class, *args, **kwargs)
