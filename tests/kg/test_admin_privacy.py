"""The KG admin never reads out what a staff user may not see: URL filters take only a list's
own filters and ids (a filter on words answered "yes" or "no" about them)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from kg.models import Observation
from tests.kg.factories import (
    EdgeCandidateFactory,
    EdgeFactory,
    EntityCandidateFactory,
    EntityFactory,
    ThoughtFactory,
)

pytestmark = pytest.mark.django_db
SECRET_WORDS = (b"diary", b"Quillport", b"tidewater")


@pytest.fixture
def root_client(db: None) -> Client:
    client = Client()
    client.force_login(User.objects.create_superuser("root", password="pw-root-123"))
    return client


@pytest.fixture
def secret(user):
    """A private thought of alice's and the memories drawn from it (hidden from staff)."""
    return ThoughtFactory(owner=user, content="my secret diary line", is_private=True)


@pytest.fixture
def hidden(secret):
    return EntityFactory(name="Quillport", description="tidewater", source_thought=secret)


def admin_list(name: str) -> str:
    return f"/admin/kg/{name}/"


@pytest.mark.parametrize(
    ("name", "lookup", "hit", "miss"),
    [
        ("entitycandidate", "staged_by_thought__content__startswith", "my secret", "nothing"),
        ("entitycandidate", "description__icontains", "tidewater", "desert"),
        ("edgecandidate", "staged_by_thought__content__startswith", "my secret", "nothing"),
        ("entity", "source_thought__content__startswith", "my secret", "nothing"),
        ("entity", "name__startswith", "Quill", "Zzz"),
        ("observation", "entity__name__startswith", "Quill", "Zzz"),
        ("observation", "source_thought__content__icontains", "diary", "nothing"),
        ("edge", "source__name__startswith", "Quill", "Zzz"),
        ("edge", "source_thought__content__icontains", "diary", "nothing"),
    ],
)
def test_url_filters_on_words_are_refused_alike_on_a_hit_and_a_miss(
    root_client, user, secret, hidden, name, lookup, hit, miss
):
    shared = EntityFactory(name="Harbourmaster")
    EntityCandidateFactory(name="Quillport", description="tidewater", staged_by_thought=secret)
    EdgeCandidateFactory(source_name="Quillport", staged_by_thought=secret)
    Observation.objects.create(name="Shared note", entity=hidden)
    EdgeFactory(source=hidden, target=shared)
    on_hit = root_client.get(admin_list(name), {lookup: hit})
    on_miss = root_client.get(admin_list(name), {lookup: miss})
    assert on_hit.status_code == on_miss.status_code == 400
    assert on_hit.content == on_miss.content
    assert not any(word in on_hit.content for word in SECRET_WORDS)


def test_the_lists_own_filters_still_work(root_client, hidden):
    fresh = EntityCandidateFactory(name="Fresh", confidence=0.9)
    EntityCandidateFactory(name="Done", status="rejected")
    shared = EntityFactory(name="Harbourmaster", entity_type="place")
    guards = EdgeFactory(source=shared, target=EntityFactory(), rel_type="guards")
    note = Observation.objects.create(name="Harbour hours", entity=shared)
    Observation.objects.create(name="Unattached")

    def rows(name: str, params: dict[str, object]) -> list[object]:
        response = root_client.get(admin_list(name), params)
        assert response.status_code == 200
        return list(response.context["cl"].result_list)

    assert rows("entitycandidate", {"status__exact": "pending", "confidence": "high"}) == [fresh]
    assert rows("entity", {"entity_type__exact": "place"}) == [shared]
    assert rows("observation", {"entity__id__exact": shared.pk}) == [note]
    assert rows("edge", {"rel_type__exact": "guards"}) == [guards]
