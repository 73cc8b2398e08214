from __future__ import annotations

import factory
from django.contrib.auth.models import User

from kg.models import Entity, Observation
from thoughts.models import Thought


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = User
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"thoughts-user-{n}")


class ThoughtFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Thought

    owner = factory.SubFactory(UserFactory)
    content = factory.Sequence(lambda n: f"Stored thought number {n}.")
    origin = "human"
    mode = "question"


class EntityFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Entity

    name = factory.Sequence(lambda n: f"Entity {n}")
    entity_type = "concept"


class ObservationFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Observation

    name = factory.Sequence(lambda n: f"Observation {n}")
    description = ""
