"""GET /api/v1/thoughts/ and /api/v1/thoughts/{id}/ over HTTP: fields, pagination, filters,
400s that name the field, links with their status and the injected memories."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from django.urls import reverse

from tests.thoughts.factories_read import EntityFactory, ObservationFactory, ThoughtFactory
from thoughts.models import Thought

pytestmark = pytest.mark.django_db
LIST = "/api/v1/thoughts/"


def detail(thought_id: object) -> str:
    return f"/api/v1/thoughts/{thought_id}/"


def ids(resp) -> list[str]:
    assert resp.status_code == 200, resp.json()
    return [row["id"] for row in resp.json()["results"]]


def test_routes_have_the_documented_names():
    assert reverse("thought-list") == LIST
    assert reverse("search") == "/api/v1/search"
    pk = uuid.uuid4()
    assert reverse("thought-detail", args=[pk]) == detail(pk)
    assert reverse("thought-chain", args=[pk]) == f"{detail(pk)}chain/"


def test_list_shows_own_thoughts_newest_first_with_their_fields(api, user, other_user):
    old = ThoughtFactory(owner=user, created_at=datetime(2025, 1, 1, tzinfo=UTC))
    new = ThoughtFactory(owner=user, tags=["plan"], session_id="s1", confidence=0.4)
    ThoughtFactory(owner=other_user)
    resp = api.get(LIST)
    assert ids(resp) == [str(new.pk), str(old.pk)]
    body = resp.json()
    assert body["count"] == 2
    row = body["results"][0]
    assert row["tags"] == ["plan"]
    assert row["session_id"] == "s1"
    assert row["confidence"] == 0.4
    assert row["embedding_dim"] == 384
    assert "embedding" not in row


def test_list_needs_authentication(anon_api):
    resp = anon_api.get(LIST)
    assert resp.status_code == 401
    assert resp.json()["error_code"] == "not_authenticated"


def test_list_is_paginated_with_limit_and_offset(api, user):
    made = [ThoughtFactory(owner=user) for _ in range(7)]
    newest_first = [str(t.pk) for t in reversed(made)]
    first = api.get(LIST, {"limit": 3})
    assert ids(first) == newest_first[:3]
    assert first.json()["count"] == 7
    assert "offset=3" in first.json()["next"]
    last = api.get(LIST, {"limit": 3, "offset": 6})
    assert ids(last) == newest_first[6:]
    assert last.json()["next"] is None


def test_list_query_count_does_not_grow_with_the_page(api, user, django_assert_num_queries):
    for _ in range(3):
        ThoughtFactory(owner=user, tags=["idea"])
    # token lookup, count, page
    with django_assert_num_queries(3):
        assert len(ids(api.get(LIST))) == 3
    for _ in range(20):
        ThoughtFactory(owner=user, tags=["idea"])
    with django_assert_num_queries(3):
        assert len(ids(api.get(LIST, {"tags": "idea"}))) == 23


def test_list_filters_by_session_chain_origin_and_mode(api, user):
    a = ThoughtFactory(owner=user, session_id="s1", chain_id="c1", origin="human", mode="plan")
    b = ThoughtFactory(owner=user, session_id="s1", chain_id="c2", origin="tool", mode="debug")
    ThoughtFactory(owner=user, session_id="s2", chain_id="c1", origin="tool", mode="plan")
    assert set(ids(api.get(LIST, {"session_id": "s1"}))) == {str(a.pk), str(b.pk)}
    assert ids(api.get(LIST, {"session_id": "s1", "chain_id": "c2"})) == [str(b.pk)]
    assert ids(api.get(LIST, {"origin": "human"})) == [str(a.pk)]
    assert ids(api.get(LIST, {"mode": "debug"})) == [str(b.pk)]


def test_list_filters_tags_any_or_all(api, user):
    both = ThoughtFactory(owner=user, tags=["plan", "idea"])
    plan = ThoughtFactory(owner=user, tags=["plan"])
    ThoughtFactory(owner=user, tags=["dx"])
    assert set(ids(api.get(LIST, {"tags": "plan,idea"}))) == {str(both.pk), str(plan.pk)}
    assert set(ids(api.get(f"{LIST}?tags=plan&tags=idea"))) == {str(both.pk), str(plan.pk)}
    all_of = api.get(LIST, {"tags": "plan,idea", "tags_match": "all"})
    assert ids(all_of) == [str(both.pk)]


def test_list_filters_dates_inclusively_and_confidence_range(api, user):
    day = datetime(2025, 3, 10, tzinfo=UTC)
    early = ThoughtFactory(owner=user, created_at=day, confidence=0.2)
    late = ThoughtFactory(
        owner=user, created_at=day + timedelta(hours=23, minutes=59), confidence=0.9
    )
    ThoughtFactory(owner=user, created_at=day + timedelta(days=1), confidence=None)
    on_day = api.get(LIST, {"date_from": "2025-03-10", "date_to": "2025-03-10"})
    assert set(ids(on_day)) == {str(early.pk), str(late.pk)}
    after_noon = api.get(LIST, {"date_from": "2025-03-10T12:00:00Z", "date_to": "2025-03-10"})
    assert ids(after_noon) == [str(late.pk)]
    assert ids(api.get(LIST, {"confidence_gte": 0.5})) == [str(late.pk)]
    assert ids(api.get(LIST, {"confidence_lte": "0.5"})) == [str(early.pk)]
    # Out-of-range bounds are clamped like the original tool: gte 7 means gte 1.
    assert ids(api.get(LIST, {"confidence_gte": 7})) == []
    assert set(ids(api.get(LIST, {"confidence_gte": -3}))) == {str(early.pk), str(late.pk)}


def test_list_filters_by_continuity_link_in_either_id_form(api, user):
    head = ThoughtFactory(owner=user)
    nxt = ThoughtFactory(owner=user, previous_thought=head)
    rev = ThoughtFactory(owner=user, revises_thought=head)
    branch = ThoughtFactory(owner=user, branch_from=head)
    assert ids(api.get(LIST, {"previous_thought_id": str(head.pk)})) == [str(nxt.pk)]
    assert ids(api.get(LIST, {"revises_thought": f"thoughts:{head.pk}"})) == [str(rev.pk)]
    assert ids(api.get(LIST, {"branch_from": str(head.pk)})) == [str(branch.pk)]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"origin": "alien"}, "origin"),
        ({"mode": "DROP TABLE"}, "mode"),
        ({"tags_match": "some"}, "tags_match"),
        ({"tags": "bad tag!"}, "tags"),
        ({"date_from": "yesterday"}, "date_from"),
        ({"date_to": "2025-02-30"}, "date_to"),
        ({"confidence_gte": "high"}, "confidence_gte"),
        ({"previous_thought_id": "thoughts:nope"}, "previous_thought_id"),
        ({"session_id": "x" * 129}, "session_id"),
    ],
)
def test_bad_filter_values_are_a_400_envelope_naming_the_field(api, user, params, field):
    ThoughtFactory(owner=user)
    resp = api.get(LIST, params)
    assert resp.status_code == 400
    body = resp.json()
    assert body["error_code"] == "invalid"
    assert set(body) == {"error_code", "detail", "fields"}
    assert list(body["fields"]) == [field]
    assert field in body["detail"]


@pytest.mark.parametrize(
    "params",
    [
        {"date_from": "2025-03-02", "date_to": "2025-03-01"},
        {"confidence_gte": 0.8, "confidence_lte": 0.2},
    ],
)
def test_a_range_the_wrong_way_round_matches_nothing(api, user, params):
    # Issue 31: the schema cannot compare two parameters, so an inverted range is not a 400
    # (it was) but what it means, a range no thought falls in.
    ThoughtFactory(owner=user, confidence=0.5)
    resp = api.get(LIST, params)
    assert resp.status_code == 200, resp.content
    assert resp.json()["count"] == 0


def test_detail_has_links_with_their_status_and_embedding_metadata(api, user, other_user):
    head = ThoughtFactory(owner=user)
    theirs = ThoughtFactory(owner=other_user)
    not_yet = uuid.uuid4()
    thought = ThoughtFactory(
        owner=user,
        previous_thought=head,
        revises_thought_id=not_yet,
        branch_from_id=theirs.pk,
        enriched_content="with memories",
        verification={"confidence_score": 0.5},
    )
    resp = api.get(detail(thought.pk))
    assert resp.status_code == 200, resp.json()
    body = resp.json()
    assert body["links"] == {
        "previous_thought": {"id": str(head.pk), "status": "record"},
        "revises_thought": {"id": str(not_yet), "status": "string"},
        # Someone else's thought reads exactly like one that does not exist.
        "branch_from": {"id": str(theirs.pk), "status": "string"},
    }
    assert body["embedding"]["provider"] == "hash"
    assert body["embedding"]["dim"] == 384
    assert body["embedding"]["embedded_at"]
    assert body["enriched_content"] == "with memories"
    assert body["verification"] == {"confidence_score": 0.5}
    assert body["content"] == thought.content


def test_detail_without_links_has_null_links(api, user):
    thought = ThoughtFactory(owner=user)
    links = api.get(detail(thought.pk)).json()["links"]
    assert links == {"previous_thought": None, "revises_thought": None, "branch_from": None}


def test_detail_resolves_injected_memories_in_stored_order(api, user):
    entity = EntityFactory(name="RabbitMQ", entity_type="technology")
    obs = ObservationFactory(name="Queue backlog", description="grows at night")
    gone = EntityFactory(name="Removed")
    gone_id = gone.pk
    gone.delete()
    thought = ThoughtFactory(
        owner=user,
        injected_memories=[
            {
                "id": obs.pk,
                "kind": "observation",
                "similarity": 0.71,
                "rank": 1,
                "reason": "threshold",
            },
            {"id": entity.pk, "kind": "entity", "similarity": 0.6, "score": 0.5, "rank": 2},
            f"kg_entities:{gone_id}",
        ],
    )
    memories = api.get(detail(thought.pk)).json()["injected_memories"]
    assert [(m["kind"], m["id"], m["available"]) for m in memories] == [
        ("observation", obs.pk, True),
        ("entity", entity.pk, True),
        ("entity", gone_id, False),
    ]
    assert memories[0]["name"] == "Queue backlog"
    assert memories[0]["description"] == "grows at night"
    assert memories[0]["similarity"] == 0.71
    assert memories[0]["reason"] == "threshold"
    assert memories[1]["entity_type"] == "technology"
    assert memories[1]["score"] == 0.5
    assert memories[2]["name"] is None


def test_detail_of_missing_or_malformed_id_is_404(api, user):
    ThoughtFactory(owner=user)
    for pk in (uuid.uuid4(), "not-a-uuid"):
        resp = api.get(detail(pk))
        assert resp.status_code == 404
        assert resp.json()["error_code"] == "not_found"


def test_the_id_think_answers_with_opens_the_thought_and_its_chain(api, user, other_user):
    """think answers ``thoughts:<uuid>``; detail and chain take that form as the filters do."""
    made = api.post("/api/v1/think", {"content": "Where did the cache go?"}, format="json")
    ref = made.json()["delegated_result"]["thought_id"]
    assert ref.startswith("thoughts:")
    opened = api.get(detail(ref))
    assert opened.status_code == 200
    assert opened.json()["id"] == ref.removeprefix("thoughts:")
    assert api.get(detail(ref) + "chain/").status_code == 200
    theirs = ThoughtFactory(owner=other_user)
    assert api.get(detail(f"thoughts:{theirs.pk}")).status_code == 404  # still only your own


def test_reading_thoughts_writes_nothing(api, user):
    thought = ThoughtFactory(owner=user)
    api.get(detail(thought.pk))
    api.get(LIST)
    thought.refresh_from_db()
    assert thought.access_count == 0
    assert thought.last_accessed is None


def test_openapi_schema_documents_the_read_endpoints(api):
    resp = api.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert resp.status_code == 200
    schema = resp.json()
    paths = schema["paths"]
    assert {"get"} <= set(paths["/api/v1/thoughts/"])
    assert {"get"} <= set(paths["/api/v1/thoughts/{id}/"])
    assert {"get"} <= set(paths["/api/v1/thoughts/{id}/chain/"])
    list_params = {p["name"] for p in paths["/api/v1/thoughts/"]["get"]["parameters"]}
    assert {"session_id", "chain_id", "origin", "mode", "tags", "tags_match", "date_from",
            "date_to", "confidence_gte", "confidence_lte", "limit", "offset"} <= list_params  # fmt: skip
    search = paths["/api/v1/search"]["post"]
    assert {"200", "400", "503"} <= set(search["responses"])
    body = schema["components"]["schemas"]["SearchInputRequest"]
    assert body["required"] == ["query"]
    assert {"target", "include_thoughts", "top_k_memories", "top_k_thoughts", "sim_thresh",
            "order"} <= set(body["properties"])  # fmt: skip
    assert "404" in paths["/api/v1/thoughts/{id}/"]["get"]["responses"]


def test_the_schema_documents_thought_ids_and_date_bounds_as_the_api_parses_them(api, user):
    resp = api.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    params = {
        p["name"]: p["schema"]
        for p in resp.json()["paths"]["/api/v1/thoughts/"]["get"]["parameters"]
    }
    # Each optional parameter also takes "", which DRF reads as left out (issue 31).
    left_out = {"type": "string", "maxLength": 0}
    date, empty = params["date_from"]["anyOf"]
    assert {s["format"] for s in date["anyOf"]} == {"date", "date-time"} and empty == left_out
    assert params["date_to"] == params["date_from"]
    pattern = params["previous_thought_id"]["anyOf"][0]["pattern"]
    thought = ThoughtFactory(owner=user, session_id="s")
    forms = [str(thought.id), f"thoughts:{thought.id}", thought.id.hex]
    for form in forms:  # what the pattern documents, the API takes
        assert re.fullmatch(pattern, form), form
        listed = api.get("/api/v1/thoughts/", {"previous_thought_id": form})
        assert listed.status_code == 200, (form, listed.content)
    for form in ["thought:" + str(thought.id), str(thought.id)[:-1], "not-an-id"]:
        assert not re.fullmatch(pattern, form), form
        assert api.get("/api/v1/thoughts/", {"previous_thought_id": form}).status_code == 400


def test_think_and_the_list_filter_take_the_same_thought_id_spellings(api, user):
    """One parser (``thoughts.refs``) behind both: a spelling the schema's pattern does not
    document is refused by both, not taken by one and refused by the other."""
    thought = ThoughtFactory(owner=user)
    hexed = thought.id.hex
    taken = [str(thought.id), f"thoughts:{thought.id}", hexed, f"  {thought.id} "]
    refused = [
        "{" + str(thought.id) + "}",  # uuid.UUID would take these three
        f"urn:uuid:{thought.id}",
        f"{hexed[:4]}-{hexed[4:]}",
        f"thoughts:{hexed[:-1]}",
    ]

    def think_linked(form: str):
        return api.post(
            "/api/v1/think",
            {"content": "next", "injection_scale": 0, "previous_thought_id": form},
            format="json",
        )

    for form in taken:
        assert api.get(LIST, {"previous_thought_id": form}).status_code == 200, form
        made = think_linked(form)
        assert made.status_code == 201, (form, made.content)
        assert made.json()["telemetry"]["links_telemetry"] == {"previous_thought_id": "record"}
    stored = Thought.objects.filter(owner=user).count()
    for form in refused:
        listed = api.get(LIST, {"previous_thought_id": form})
        assert listed.status_code == 400, form
        assert "previous_thought_id" in listed.json()["fields"]
        made = think_linked(form)
        assert made.status_code == 400, form
        assert "previous_thought_id" in made.json()["fields"]
    assert Thought.objects.filter(owner=user).count() == stored
