"""A name the endpoint does not take is a 400 naming it, through every kind of input: a JSON
body, a nested item, a query string; never a default quietly used or a filter quietly dropped."""

from __future__ import annotations

import pytest
from drf_spectacular.generators import SchemaGenerator

from innervoice.models import DialogueThread
from kg.models import CandidateStatus
from tests.kg.factories import EntityCandidateFactory, EntityFactory, ThoughtFactory
from thoughts.models import Thought

pytestmark = pytest.mark.django_db


def test_a_misspelt_think_parameter_is_a_400_with_the_name_meant_and_stores_nothing(api):
    r = api.post(
        "/api/v1/think", {"content": "Plan the export.", "injection_scal": 3}, format="json"
    )
    assert r.status_code == 400, r.content
    assert r.json()["error_code"] == "invalid"
    assert r.json()["fields"] == {
        "injection_scal": ["Unknown field. Did you mean injection_scale?"]
    }
    assert Thought.objects.count() == 0
    # The same body with the name spelt right is taken.
    ok = api.post(
        "/api/v1/think", {"content": "Plan the export.", "injection_scale": 3}, format="json"
    )
    assert ok.status_code == 201, ok.content
    assert Thought.objects.count() == 1


def test_a_name_like_none_lists_what_the_endpoint_takes(api):
    r = api.post("/api/v1/search", {"query": "redis", "zzz": 1}, format="json")
    assert r.status_code == 400
    (message,) = r.json()["fields"]["zzz"]
    assert message.startswith("Unknown field. This endpoint takes: ")
    assert "top_k_memories" in message and "query" in message


def test_unknown_and_invalid_fields_are_reported_together(api):
    r = api.post("/api/v1/think", {"content": 5, "sesion_id": "s1"}, format="json")
    assert r.status_code == 400
    fields = r.json()["fields"]
    assert fields["content"] == ["Not a valid string."]
    assert fields["sesion_id"] == ["Unknown field. Did you mean session_id?"]


def test_a_misspelt_list_filter_is_a_400_not_every_thought(api, user):
    ThoughtFactory(owner=user, session_id="s1")
    ThoughtFactory(owner=user, session_id="s2")
    r = api.get("/api/v1/thoughts/", {"sesion_id": "s1"})
    assert r.status_code == 400
    assert r.json()["fields"] == {"sesion_id": ["Unknown field. Did you mean session_id?"]}
    # Paging and the renderer's ``format`` are the list's too.
    ok = api.get(
        "/api/v1/thoughts/", {"session_id": "s1", "limit": 1, "offset": 0, "format": "json"}
    )
    assert ok.status_code == 200
    assert [t["session_id"] for t in ok.json()["results"]] == ["s1"]


def test_paging_parameters_belong_to_lists_only(api, user):
    thought = ThoughtFactory(owner=user)
    chain = api.get(f"/api/v1/thoughts/{thought.id}/chain/", {"limit": 5})
    assert chain.status_code == 400
    assert list(chain.json()["fields"]) == ["limit"]
    assert api.get(f"/api/v1/thoughts/{thought.id}/chain/", {"depth": 2}).status_code == 200
    search = api.post("/api/v1/search", {"query": "redis", "limit": 5}, format="json")
    assert search.status_code == 400 and list(search.json()["fields"]) == ["limit"]


def test_kg_lists_and_search_refuse_unknown_query_names(api):
    EntityFactory(name="Redis")
    r = api.get("/api/v1/kg/entities/", {"entity_typ": "technology"})
    assert r.status_code == 400
    assert r.json()["fields"] == {"entity_typ": ["Unknown field. Did you mean entity_type?"]}
    assert (
        api.get("/api/v1/kg/entities/", {"entity_type": "technology", "limit": 5}).status_code
        == 200
    )
    search = api.get("/api/v1/kg/search/", {"q": "redis", "topk": 3})
    assert search.status_code == 400 and list(search.json()["fields"]) == ["topk"]


def test_a_nested_decision_item_with_an_unknown_key_decides_nothing(mod_api):
    cand = EntityCandidateFactory()
    items = [{"id": cand.pk, "kind": "entity", "decision": "approve", "canonical": 3}]
    r = mod_api.post("/api/v1/kg/candidates/decide", {"items": items}, format="json")
    assert r.status_code == 400, r.content
    assert r.json()["fields"] == {
        "items": {"0": {"canonical": ["Unknown field. Did you mean canonical_id?"]}}
    }
    cand.refresh_from_db()
    assert cand.status == CandidateStatus.PENDING and cand.promoted_id is None


def test_the_inner_voice_refuses_an_unknown_key_and_opens_no_thread(api):
    r = api.post(
        "/api/v1/inner-voice", {"query": "What did I plan?", "new_thred": "plans"}, format="json"
    )
    assert r.status_code == 400, r.content
    assert r.json()["fields"] == {"new_thred": ["Unknown field. Did you mean new_thread?"]}
    assert DialogueThread.objects.count() == 0 and Thought.objects.count() == 0


def test_a_form_body_is_refused_as_the_schema_says(api):
    # Bodies are JSON only (a form cannot say null, a number or a nested object): a form post
    # is a 415 and stores nothing.
    r = api.post("/api/v1/think", {"content": "From a form.", "csrfmiddlewaretoken": "x"})
    assert r.status_code == 415, r.content
    assert r.json()["error_code"] == "unsupported_media_type"
    assert Thought.objects.count() == 0


def test_the_schema_says_request_bodies_take_no_other_properties():
    schema = SchemaGenerator().get_schema(request=None, public=True)
    body = schema["paths"]["/api/v1/think"]["post"]["requestBody"]["content"]["application/json"]
    name = body["schema"]["$ref"].rsplit("/", 1)[1]
    assert schema["components"]["schemas"][name]["additionalProperties"] is False
    # Responses stay open: a client must not break when the API adds a field.
    out = schema["paths"]["/api/v1/think"]["post"]["responses"]["201"]["content"]
    out_name = out["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
    assert "additionalProperties" not in schema["components"]["schemas"][out_name]
