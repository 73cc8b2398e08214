"""The home page: the way in for anyone; for a signed-in user their own summary; the pending
count for moderators only."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from tests.kg.factories import EntityCandidateFactory, EntityFactory
from tests.thoughts.factories import ThoughtFactory

pytestmark = pytest.mark.django_db


def home(user: Any = None) -> str:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client.get("/").content.decode()


def test_anyone_gets_the_way_in_and_no_summary() -> None:
    page = home()
    assert 'id="home-sign-in"' in page and 'id="summary"' not in page


def test_a_signed_in_user_sees_their_own_recent_thoughts_and_the_graph_size(
    user: Any, other_user: Any
) -> None:
    ThoughtFactory(owner=user, content="my own recent thought")
    ThoughtFactory(owner=other_user, content="bob's thought")
    EntityFactory()
    page = home(user)
    assert "my own recent thought" in page and "bob's thought" not in page
    assert "1 entity and 0 connections" in page
    assert 'id="pending-count"' not in page


def test_moderators_see_the_pending_count(moderator: Any) -> None:
    from kg.services import StagedObservation, stage_observations

    EntityCandidateFactory()
    EntityCandidateFactory()
    stage_observations(observations=[StagedObservation("Ledger: nightly")], origin="mcp:1")
    assert "3 candidates waiting for review" in home(moderator)


def test_the_open_thread_says_how_many_exchanges_it_has(user: Any) -> None:
    from tests.innervoice.factories import DialogueExchangeFactory, DialogueThreadFactory

    thread: Any = DialogueThreadFactory(owner=user, topic="billing")
    DialogueExchangeFactory(thread=thread, position=1)
    DialogueExchangeFactory(thread=thread, position=2)
    page = home(user)
    assert 'id="open-thread">billing</a> <span class="muted">· 2 exchanges</span>' in page
