from __future__ import annotations

import factory
from django.utils import timezone

from innervoice.models import DialogueExchange, DialogueThread
from tests.thoughts.factories import ThoughtFactory, UserFactory


class DialogueThreadFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = DialogueThread

    owner = factory.SubFactory(UserFactory)
    topic = factory.Sequence(lambda n: f"topic {n}")
    last_interaction = factory.LazyFunction(timezone.now)


class DialogueExchangeFactory(factory.django.DjangoModelFactory):
    """An exchange with its two thoughts, owned by the thread's owner as the ask stores them."""

    class Meta:
        model = DialogueExchange

    thread = factory.SubFactory(DialogueThreadFactory)
    position = factory.Sequence(lambda n: n + 1)
    synthesis_thought = factory.SubFactory(
        ThoughtFactory, owner=factory.SelfAttribute("..thread.owner"), origin="inner_voice"
    )
    feedback_thought = factory.SubFactory(
        ThoughtFactory,
        owner=factory.SelfAttribute("..thread.owner"),
        origin="inner_voice.feedback",
        content="What would confirm it?",
    )
