"""The knowledge-graph pages over HTTP (the browser flow is in tests/e2e): sign-in, the
memory rule (a memory from someone else's private thought is a 404 and never drawn), source
thoughts named to their owner only, and the review link for moderators only."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from tests.kg.factories import EdgeFactory, EntityFactory, ThoughtFactory

pytestmark = pytest.mark.django_db


def signed_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_the_pages_need_a_sign_in() -> None:
    entity: Any = EntityFactory()
    for url in ("/kg/", f"/kg/entities/{entity.pk}/"):
        assert Client().get(url)["Location"].startswith("/accounts/login/")


def test_a_memory_from_someone_elses_private_thought_is_hidden(user: Any, other_user: Any) -> None:
    private: Any = ThoughtFactory(owner=other_user, is_private=True)
    hidden: Any = EntityFactory(name="Bob's secret", source_thought=private)
    shown: Any = EntityFactory(name="Shared thing")
    EdgeFactory(source=shown, target=hidden)
    client = signed_in(user)
    assert client.get(f"/kg/entities/{hidden.pk}/").status_code == 404
    page = client.get(f"/kg/entities/{shown.pk}/").content.decode()
    assert "Bob's secret" not in page
    assert "Bob's secret" not in client.get("/kg/").content.decode()


def test_the_entity_page_draws_neighbours_as_links_and_names_own_sources_only(
    user: Any, other_user: Any
) -> None:
    mine: Any = ThoughtFactory(owner=user)
    theirs: Any = ThoughtFactory(owner=other_user)
    focus: Any = EntityFactory(name="Billing API", source_thought=mine)
    near: Any = EntityFactory(name="Postgres", source_thought=theirs)
    far: Any = EntityFactory(name="Disk")
    EdgeFactory(source=focus, target=near, rel_type="uses")
    EdgeFactory(source=near, target=far, rel_type="stores_on")
    client = signed_in(user)
    page = client.get(f"/kg/entities/{focus.pk}/").content.decode()
    assert f'href="/kg/entities/{near.pk}/"' in page and f'data-key="{far.pk}"' not in page
    assert f"/thoughts/{mine.pk}/" in page and str(theirs.pk) not in page
    assert f">{mine.content}</a>" in page  # named by its words, not its id
    deeper = client.get(f"/kg/entities/{focus.pk}/", {"depth": "2"}).content.decode()
    assert f'data-key="{far.pk}"' in deeper


def test_only_moderators_get_the_review_link(user: Any, moderator: Any) -> None:
    assert 'id="kg-review-link"' not in signed_in(user).get("/kg/").content.decode()
    assert 'id="kg-review-link"' in signed_in(moderator).get("/kg/").content.decode()


def test_the_list_by_type(user: Any) -> None:
    EntityFactory(name="Alice", entity_type="person")
    EntityFactory(name="Redis", entity_type="technology")
    page = signed_in(user).get("/kg/", {"type": "person"}).content.decode()
    assert "Alice" in page and ">Redis<" not in page


def test_the_page_and_the_api_name_the_same_source_thoughts(user: Any, other_user: Any) -> None:
    """One rule, one selector (``kg.selectors.own_source_ids``) behind both doors: the thoughts
    the entity page lists are exactly those the API's neighbourhood names to the same viewer."""
    from kg import selectors

    mine: Any = ThoughtFactory(owner=user)
    theirs: Any = ThoughtFactory(owner=other_user)  # public: the memory shows, its source not
    focus: Any = EntityFactory(name="Billing API", source_thought=mine)
    near: Any = EntityFactory(name="Postgres", source_thought=theirs)
    edge: Any = EdgeFactory(source=focus, target=near, rel_type="uses", source_thought=mine)
    assert selectors.own_source_ids(user, focus, near, edge) == {mine.pk}
    assert selectors.own_source_ids(other_user, focus, near, edge) == {theirs.pk}
    client = signed_in(user)
    api = client.get(f"/api/v1/kg/entities/{focus.pk}/neighbors/").json()
    rows = [api["entity"], *api["nodes"], *api["edges"]]
    named = {row["source_thought_id"] for row in rows} - {None}
    assert named == {str(mine.pk)}
    page = client.get(f"/kg/entities/{focus.pk}/").content.decode()
    assert f"/thoughts/{mine.pk}/" in page and str(theirs.pk) not in page


def test_the_review_queue_is_for_moderators_only(user: Any, moderator: Any) -> None:
    assert Client().get("/kg/review/")["Location"].startswith("/accounts/login/")
    assert signed_in(user).get("/kg/review/").status_code == 403
    assert signed_in(user).post("/kg/review/decide", {}).status_code == 403
    assert signed_in(moderator).get("/kg/review/").status_code == 200


def test_each_candidate_shows_the_sentence_it_was_drawn_from(
    user: Any, other_user: Any, moderator: Any
) -> None:
    from tests.kg.factories import EdgeCandidateFactory, EntityCandidateFactory

    said: Any = ThoughtFactory(owner=user, content="We met on Monday. Dana runs the Leeds lab now.")
    secret: Any = ThoughtFactory(owner=other_user, is_private=True, content="Kim is leaving.")
    EntityCandidateFactory(name="Dana", entity_type="person", staged_by_thought=said)
    EntityCandidateFactory(name="Kim", entity_type="person", staged_by_thought=secret)
    EdgeCandidateFactory(evidence="The Billing API depends on Postgres for invoices.")
    page = signed_in(moderator).get("/kg/review/").content.decode()
    assert "<blockquote><mark>Dana</mark> runs the Leeds lab now.</blockquote>" in page
    assert "The Billing API depends on <mark>Postgres</mark>" not in page
    assert "The <mark>Billing API</mark> depends on Postgres for invoices." in page
    assert "Kim is leaving" not in page and "its words stay with its owner" in page
    only_edges = signed_in(moderator).get("/kg/review/", {"kind": "relationship"})
    assert "Dana" not in only_edges.content.decode()


def test_decisions_go_through_the_apis_service_and_come_back_to_the_queue(
    moderator: Any,
) -> None:
    from kg.models import CandidateStatus, Edge, EdgeCandidate, EntityCandidate
    from tests.kg.factories import EdgeCandidateFactory, EntityCandidateFactory

    billing: Any = EntityFactory(name="Billing API", entity_type="service")
    EntityFactory(name="Postgres", entity_type="technology")
    edge: Any = EdgeCandidateFactory()
    dup: Any = EntityCandidateFactory(name="billing-api", entity_type="service")
    noise: Any = EntityCandidateFactory(name="The", entity_type="concept")
    client = signed_in(moderator)
    page = client.get("/kg/review/").content.decode()
    assert f'<option value="{billing.pk}">Billing API (service)' in page  # alias suggestions

    done = client.post(
        "/kg/review/decide",
        {"id": edge.pk, "kind": "edge", "decision": "approve", "queue": "mixed", "page": "1"},
    )
    assert done.status_code == 302 and done["Location"] == "/kg/review/?kind=mixed&page=1"
    assert Edge.objects.filter(source=billing, rel_type="depends_on").exists()
    alias = {"id": dup.pk, "kind": "entity", "decision": "alias", "canonical_id": billing.pk}
    client.post("/kg/review/decide", alias)
    client.post("/kg/review/decide", {"id": noise.pk, "kind": "entity", "decision": "reject"})
    statuses = dict(EntityCandidate.objects.values_list("name", "status"))
    assert statuses == {"billing-api": CandidateStatus.ALIASED, "The": CandidateStatus.REJECTED}
    assert EdgeCandidate.objects.get().status == CandidateStatus.APPROVED
    after = client.get("/kg/review/").content.decode()
    assert 'id="review-empty"' in after
    # A second decision on the same candidate says why it failed, as the API does.
    again = client.post(
        "/kg/review/decide", {"id": noise.pk, "kind": "entity", "decision": "approve"}, follow=True
    ).content.decode()
    assert "already" in again or "rejected" in again
    # An alias without its entity decides nothing.
    other: Any = EntityCandidateFactory(name="Billing", entity_type="service")
    page = client.post(
        "/kg/review/decide", {"id": other.pk, "kind": "entity", "decision": "alias"}, follow=True
    ).content.decode()
    assert "Nothing was decided" in page
    assert EntityCandidate.objects.get(pk=other.pk).status == CandidateStatus.PENDING


def test_the_queue_pages_and_a_decision_returns_to_its_page(moderator: Any) -> None:
    from kg.models import CandidateStatus, EntityCandidate
    from tests.kg.factories import EntityCandidateFactory

    rows: list[Any] = [EntityCandidateFactory(name=f"Name {n}") for n in range(23)]
    client = signed_in(moderator)
    first = client.get("/kg/review/", {"kind": "entity"}).content.decode()
    assert first.count('class="candidate"') == 20 and "Page 1 of 2" in first
    second = client.get("/kg/review/", {"kind": "entity", "page": "2"}).content.decode()
    assert second.count('class="candidate"') == 3
    oldest = rows[0]
    assert f'id="cand-entity-{oldest.pk}"' in second  # newest first: the oldest is last
    back = client.post(
        "/kg/review/decide",
        {"id": oldest.pk, "kind": "entity", "decision": "approve", "queue": "entity", "page": "2"},
    )
    assert back["Location"] == "/kg/review/?kind=entity&page=2"
    assert EntityCandidate.objects.get(pk=oldest.pk).status == CandidateStatus.APPROVED
    # Only the queue's own kind and page come back, never an address from the form.
    odd = client.post(
        "/kg/review/decide",
        {"id": rows[1].pk, "kind": "entity", "decision": "reject", "queue": "//evil.example"},
    )
    assert odd["Location"] == "/kg/review/?kind=mixed"


def test_relations_read_as_words_on_the_pages_and_stay_identifiers_in_the_api(
    user: Any, moderator: Any
) -> None:
    """``writes_to`` is an identifier: the entity page's connections, its graph and the review
    queue say "writes to"; the API keeps the stored spelling."""
    from tests.kg.factories import EdgeCandidateFactory

    serializer: Any = EntityFactory(name="serializer")
    store: Any = EntityFactory(name="session store")
    EdgeFactory(source=serializer, target=store, rel_type="writes_to")
    page = signed_in(user).get(f"/kg/entities/{serializer.pk}/").content.decode()
    assert '<em class="relation">writes to</em>' in page
    assert 'class="edge-label"' in page and ">writes to</text>" in page
    assert "writes_to" not in page
    EdgeCandidateFactory(rel_type="stores_on")
    queue = signed_in(moderator).get("/kg/review/").content.decode()
    assert '<em class="relation">stores on</em>' in queue and "stores_on" not in queue
    api = signed_in(user).get(f"/api/v1/kg/entities/{serializer.pk}/neighbors/").content.decode()
    assert "writes_to" in api


def test_a_search_hit_on_an_observation_without_a_description_has_no_dangling_colon() -> None:
    from django.template.loader import render_to_string

    hits = [
        {"kind": "observation", "name": "golden hour", "description": "", "similarity": 0.3},
        {"kind": "observation", "name": "dawn", "description": "at 6:10", "similarity": 0.2},
    ]
    page = render_to_string("kg/explore.html", {"q": "light", "hits": hits})
    assert 'golden hour <span class="muted">observation</span>' in page
    assert 'dawn <span class="muted">observation: at 6:10</span>' in page


def test_a_long_relation_is_cut_to_fit_its_edge_and_said_whole_in_the_list(user: Any) -> None:
    focus: Any = EntityFactory(name="deploy config")
    near: Any = EntityFactory(name="ops")
    EdgeFactory(source=focus, target=near, rel_type="is_configured_by_the_operations_team")
    page = signed_in(user).get(f"/kg/entities/{focus.pk}/").content.decode()
    label = page.split('class="edge-label"', 1)[1].split("</text>", 1)[0]
    assert label.endswith(">is configured by …")  # Django cuts to 17 characters and "…"
    assert "<title>is configured by the operations team</title>" in label
    assert '<em class="relation">is configured by the operations team</em>' in page


def test_an_alias_suggestion_says_why_in_words(moderator: Any) -> None:
    from tests.kg.factories import EntityCandidateFactory

    billing: Any = EntityFactory(name="Billing API", entity_type="service")
    EntityCandidateFactory(name="billing-api", entity_type="service")
    page = signed_in(moderator).get("/kg/review/").content.decode()
    option = page.split(f'<option value="{billing.pk}">', 1)[1].split("</option>", 1)[0]
    assert option.startswith("Billing API (service) · similar name ")
    assert " by name" not in option
