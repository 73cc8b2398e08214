"""Moderation through the admin's real pages, logged in with Django's test client."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission, User
from django.test import Client
from django.urls import reverse

from kg.models import Blocklist, Edge, Entity, Observation
from tests.kg.factories import (
    EdgeCandidateFactory,
    EdgeFactory,
    EntityCandidateFactory,
    EntityFactory,
    ThoughtFactory,
)

pytestmark = pytest.mark.django_db
CHANGELIST = "admin:kg_entitycandidate_changelist"


@pytest.fixture
def viewer_client(db: None) -> Client:
    """Staff with view rights on the queue but without kg.moderate."""
    viewer = User.objects.create_user("viewer", password="pw", is_staff=True)
    viewer.user_permissions.add(
        *Permission.objects.filter(
            content_type__app_label="kg",
            codename__in=["view_entitycandidate", "view_edgecandidate", "change_entitycandidate"],
        )
    )
    client = Client()
    client.force_login(viewer)
    return client


def test_queue_lists_pending_first_and_filters_and_searches(mod_client):
    EntityCandidateFactory(name="Old rejected", status="rejected")
    EntityCandidateFactory(name="Fresh pending", confidence=0.9)
    EntityCandidateFactory(name="Weak pending", confidence=0.2)
    page = mod_client.get(reverse(CHANGELIST))
    assert page.status_code == 200
    rows = [c.name for c in page.context["cl"].result_list]
    assert rows[-1] == "Old rejected"
    high = mod_client.get(reverse(CHANGELIST), {"confidence": "high"})
    assert [c.name for c in high.context["cl"].result_list] == ["Fresh pending"]
    found = mod_client.get(reverse(CHANGELIST), {"q": "weak"})
    assert [c.name for c in found.context["cl"].result_list] == ["Weak pending"]
    pending = mod_client.get(reverse(CHANGELIST), {"status__exact": "pending", "origin": "test"})
    assert len(pending.context["cl"].result_list) == 2


def test_bulk_approve_and_reject_actions(mod_client):
    a, b, c = EntityCandidateFactory(), EntityCandidateFactory(), EntityCandidateFactory()
    resp = mod_client.post(
        reverse(CHANGELIST),
        {"action": "approve_selected", "_selected_action": [a.pk, b.pk]},
        follow=True,
    )
    assert resp.status_code == 200
    assert Entity.objects.count() == 2
    mod_client.post(reverse(CHANGELIST), {"action": "reject_selected", "_selected_action": [c.pk]})
    c.refresh_from_db()
    assert c.status == "rejected"
    assert Blocklist.objects.filter(item=c.name.lower()).exists()


def test_bulk_edge_approval_reports_missing_endpoints(mod_client):
    EntityFactory(name="Billing API")
    edge = EdgeCandidateFactory(source_name="Billing API", target_name="Nowhere")
    resp = mod_client.post(
        reverse("admin:kg_edgecandidate_changelist"),
        {"action": "approve_selected", "_selected_action": [edge.pk]},
        follow=True,
    )
    assert "target entity &#x27;Nowhere&#x27; does not exist" in resp.content.decode()
    assert Edge.objects.count() == 0


def test_review_page_shows_thought_and_suggestions_and_aliases(mod_client):
    thought = ThoughtFactory(content="We moved everything to Postgres last spring.")
    canonical = EntityFactory(name="PostgreSQL")
    cand = EntityCandidateFactory(name="Postgres", staged_by_thought=thought)
    url = reverse("admin:kg_entitycandidate_review", args=[cand.pk])
    page = mod_client.get(url)
    html = page.content.decode()
    assert "We moved everything to Postgres last spring." in html
    assert "PostgreSQL" in html and "kg-suggestions" in html
    resp = mod_client.post(url, {"decision": "alias", "canonical_id": canonical.pk, "note": "dup"})
    assert resp.status_code == 302
    cand.refresh_from_db()
    canonical.refresh_from_db()
    assert cand.status == "aliased" and cand.review_note == "dup"
    assert canonical.aliases == ["Postgres"]


def test_review_page_hides_private_thoughts_of_others(mod_client):
    thought = ThoughtFactory(content="my secret diary line", is_private=True)
    cand = EntityCandidateFactory(staged_by_thought=thought)
    page = mod_client.get(reverse("admin:kg_entitycandidate_review", args=[cand.pk]))
    assert "my secret diary line" not in page.content.decode()
    assert "A private thought" in page.content.decode()


def test_review_page_approve_and_error_message(mod_client):
    cand = EntityCandidateFactory(name="Redis")
    url = reverse("admin:kg_entitycandidate_review", args=[cand.pk])
    mod_client.post(url, {"decision": "approve"})
    assert Entity.objects.filter(name="Redis").exists()
    edge = EdgeCandidateFactory(source_name="Redis", target_name="Ghost")
    edge_url = reverse("admin:kg_edgecandidate_review", args=[edge.pk])
    resp = mod_client.post(edge_url, {"decision": "approve"}, follow=True)
    assert "target entity &#x27;Ghost&#x27; does not exist" in resp.content.decode()


def test_non_moderators_see_a_read_only_queue_and_cannot_moderate(viewer_client):
    cand = EntityCandidateFactory(name="Redis")
    page = viewer_client.get(reverse(CHANGELIST))
    assert page.status_code == 200
    assert "approve_selected" not in page.content.decode()
    viewer_client.post(
        reverse(CHANGELIST), {"action": "approve_selected", "_selected_action": [cand.pk]}
    )
    url = reverse("admin:kg_entitycandidate_review", args=[cand.pk])
    review = viewer_client.get(url)
    assert review.status_code == 200 and "Read-only" in review.content.decode()
    assert viewer_client.post(url, {"decision": "approve"}).status_code == 403
    change = viewer_client.get(reverse("admin:kg_entitycandidate_change", args=[cand.pk]))
    assert change.status_code == 200 and 'name="_save"' not in change.content.decode()
    cand.refresh_from_db()
    assert cand.status == "pending" and Entity.objects.count() == 0


@pytest.mark.parametrize(
    "name", ["entity", "edge", "observation", "blocklist", "entitycandidate", "edgecandidate"]
)
def test_admin_changelists_render(mod_client, name):
    EdgeFactory()
    assert mod_client.get(reverse(f"admin:kg_{name}_changelist")).status_code == 200


@pytest.mark.parametrize("superuser", [False, True])
def test_memory_changelists_never_show_memories_of_others_private_thoughts(
    mod_client, moderator, user, superuser
):
    """The admin shows a memory drawn from a private thought to its owner only, as the API
    does; a superuser is no exception (the thoughts admin never shows private words either)."""
    moderator.is_superuser = superuser
    moderator.save(update_fields=["is_superuser"])
    private = ThoughtFactory(owner=user, is_private=True)
    secret = EntityFactory(name="Quillport", source_thought=private)
    shared = EntityFactory(name="Harbourmaster")
    mine = EntityFactory(
        name="Lighthouse", source_thought=ThoughtFactory(owner=moderator, is_private=True)
    )
    EdgeFactory(source=shared, target=secret, rel_type="near")  # an endpoint is hidden
    EdgeFactory(source=shared, target=mine, rel_type="guards")
    Observation.objects.create(name="Quillport tides", description="secret", source_thought=private)
    Observation.objects.create(name="Harbour hours", description="open")

    def page(name: str) -> str:
        response = mod_client.get(reverse(f"admin:kg_{name}_changelist"))
        assert response.status_code == 200
        return response.content.decode()

    entities, edges, observations = page("entity"), page("edge"), page("observation")
    assert "Harbourmaster" in entities and "Lighthouse" in entities
    assert "Quillport" not in entities
    assert "guards" in edges and "near" not in edges
    assert "Harbour hours" in observations and "Quillport tides" not in observations
    hidden = mod_client.get(reverse("admin:kg_entity_change", args=[secret.pk]))
    assert hidden.status_code == 302  # the admin's "does not exist" redirect, nothing shown
    search = mod_client.get(reverse("admin:kg_entity_changelist"), {"q": "Quillport"})
    assert "0 results" in search.content.decode()  # the search box echoes the term itself


@pytest.mark.parametrize(
    ("name", "before"),
    [("entitycandidate", "column-entity_type"), ("edgecandidate", "column-status")],
)
def test_the_review_link_sits_by_the_candidate_not_past_the_screen_edge(mod_client, name, before):
    EntityCandidateFactory()
    EdgeCandidateFactory()
    page = mod_client.get(reverse(f"admin:kg_{name}_changelist")).content.decode()
    # The header's columns in order: review (the only way to alias) comes before the details.
    assert 0 < page.index("column-review_link") < page.index(before)
