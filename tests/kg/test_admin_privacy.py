"""The KG admin never reads out what a staff user may not see: URL filters take only a list's
own filters and ids (a filter on words answered "yes" or "no" about them), and an entity drawn
from someone else's private thought is neither named nor accepted where a form or a list
points at it."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.test import Client

from kg.models import Edge, Observation
from legacymind.admin.search import PRIVATE
from tests.kg.factories import (
    EdgeCandidateFactory,
    EdgeFactory,
    EntityCandidateFactory,
    EntityFactory,
    ThoughtFactory,
)
from tests.support.pages import unmasked

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
    assert unmasked(on_hit.content) == unmasked(on_miss.content)
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


def _page(client: Client, url: str, field: str, value: int) -> bytes:
    """The page without what differs on every rendering or names the id itself."""
    body = client.get(url, {field: value}).content.decode()
    body = re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "", body)
    return re.sub(rf'name="{field}" value="{value}"', f'name="{field}" value="ID"', body).encode()


@pytest.mark.parametrize(("name", "field"), [("observation", "entity"), ("edge", "source"),
                                             ("edge", "target")])  # fmt: skip
def test_add_forms_name_a_hidden_entity_no_more_than_a_missing_one(
    root_client, hidden, name, field
):
    """Django's raw id box named the entity whatever the user may see: ``?entity=<id>`` showed
    "Quillport (technology)", drawn from another user's private thought."""
    url = f"{admin_list(name)}add/"
    shown = EntityFactory(name="Harbourmaster")
    assert b"Harbourmaster" in root_client.get(url, {field: shown.pk}).content
    on_hidden = _page(root_client, url, field, hidden.pk)
    assert b"Quillport" not in on_hidden
    assert on_hidden == _page(root_client, url, field, hidden.pk + 1000)


def test_saving_a_memory_that_points_at_a_hidden_entity_is_refused_like_a_missing_one(
    root_client, hidden
):
    shared = EntityFactory(name="Harbourmaster")
    observation = {"name": "n", "description": "", "data": "{}", "confidence": 1,
                   "significance": 0.5, "access_count": 0}  # fmt: skip
    edge = {"target": shared.pk, "rel_type": "near", "data": "{}", "confidence": 1}

    def errors(name: str, form: dict[str, object]) -> object:
        response = root_client.post(f"{admin_list(name)}add/", form)
        assert response.status_code == 200  # the form again, with its errors
        assert b"Quillport" not in response.content
        return response.context["adminform"].form.errors

    missing = hidden.pk + 1000
    assert errors("observation", {**observation, "entity": hidden.pk}) == errors(
        "observation", {**observation, "entity": missing}
    )
    assert errors("edge", {**edge, "source": hidden.pk}) == errors(
        "edge", {**edge, "source": missing}
    )
    assert not Observation.objects.exists() and not Edge.objects.exists()
    root_client.post(f"{admin_list('edge')}add/", {**edge, "source": EntityFactory().pk})
    assert Edge.objects.count() == 1  # a visible entity is accepted


def test_an_observation_of_a_hidden_entity_shows_a_placeholder_and_is_not_found_by_its_name(
    root_client, hidden
):
    """An observation from a public thought (or none) can belong to an entity drawn from
    someone's private thought: the observation is shown, the entity's name is not."""
    shared = EntityFactory(name="Harbourmaster")
    note = Observation.objects.create(name="Tide table", entity=hidden)
    Observation.objects.create(name="Opening hours", entity=shared)
    page = root_client.get(admin_list("observation"))
    html = page.content.decode()
    assert "Tide table" in html and "Harbourmaster" in html
    assert PRIVATE in html and "Quillport" not in html

    def found(q: str) -> list[str]:
        response = root_client.get(admin_list("observation"), {"q": q})
        return [o.name for o in response.context["cl"].result_list]

    assert found("Quillport") == []
    assert found("Harbourmaster") == ["Opening hours"]
    assert found("Tide") == ["Tide table"]
    change_url = f"{admin_list('observation')}{note.pk}/change/"
    change = root_client.get(change_url)
    assert change.status_code == 200 and b"Quillport" not in change.content
    form = {"name": "Tide table", "description": "", "data": "{}", "confidence": 1,
            "significance": 0.5, "access_count": 0}  # fmt: skip
    kept = root_client.post(change_url, {**form, "entity": hidden.pk})
    assert kept.status_code == 200 and "entity" in kept.context["adminform"].form.errors
    assert root_client.post(change_url, {**form, "entity": shared.pk}).status_code == 302
    note.refresh_from_db()
    assert note.entity_id == shared.pk
