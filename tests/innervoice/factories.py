from __future__ import annotations

import factory
from django.utils import timezone

from innervoice.models import DialogueThread
from tests.thoughts.factories import UserFactory


class DialogueThreadFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = DialogueThread

    owner = factory.SubFactory(UserFactory)
    topic = factory.Sequence(lambda n: f"topic {n}")
    last_interaction = factory.LazyFunction(timezone.now)
