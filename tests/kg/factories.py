from __future__ import annotations

import factory
from django.contrib.auth.models import User

from kg.models import Edge, EdgeCandidate, Entity, EntityCandidate
from thoughts.models import Thought


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = User
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"kg-user-{n}")


class ThoughtFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Thought

    owner = factory.SubFactory(UserFactory)
    content = "The export worker depends on RabbitMQ."
    origin = "human"


class EntityFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Entity

    name = factory.Sequence(lambda n: f"Entity {n}")
    entity_type = "technology"


class EdgeFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Edge

    source = factory.SubFactory(EntityFactory)
    target = factory.SubFactory(EntityFactory)
    rel_type = "uses"


class EntityCandidateFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = EntityCandidate

    name = factory.Sequence(lambda n: f"Candidate {n}")
    entity_type = "technology"
    confidence = 0.7
    origin = "test"


class EdgeCandidateFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = EdgeCandidate

    source_name = "Billing API"
    target_name = "Postgres"
    rel_type = "depends_on"
    confidence = 0.6
    origin = "test"
