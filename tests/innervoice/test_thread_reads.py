"""Reading dialogue threads: the detail pages its exchanges like every list and names thoughts
as the ask does; the list searches the caller's dialogue history (spec 001, phase 3)."""

from __future__ import annotations

import pytest
import yaml
from jsonschema import Draft202012Validator

from innervoice.models import DialogueExchange
from tests.innervoice.conftest import SYNTH, ask, thought_at
from tests.innervoice.factories import DialogueExchangeFactory, DialogueThreadFactory
from tests.thoughts.conftest import embedded, text_vector
from tests.thoughts.factories import ThoughtFactory

pytestmark = pytest.mark.django_db

THREADS = "/api/v1/inner-voice/threads/"


def detail_url(thread) -> str:
    return f"{THREADS}{thread.id}/"


def test_thread_detail_pages_its_exchanges_like_every_list(api, user, django_assert_num_queries):
    thread = DialogueThreadFactory(owner=user)
    for position in (1, 2, 3):  # explicit: the factory's sequence runs on across tests
        DialogueExchangeFactory(thread=thread, position=position)

    with django_assert_num_queries(4):  # token + user, thread, count, page (thoughts joined)
        detail = api.get(detail_url(thread), {"limit": 2}).json()

    assert detail["id"] == str(thread.id) and detail["exchange_count"] == 3
    page = detail["exchanges"]
    assert set(page) == set(api.get(THREADS).json())  # count, next, previous, results
    assert page["count"] == 3 and page["previous"] is None
    assert [e["position"] for e in page["results"]] == [1, 2]
    rest = api.get(page["next"]).json()["exchanges"]
    assert [e["position"] for e in rest["results"]] == [3]
    assert rest["next"] is None and rest["previous"]


def test_thread_detail_gives_50_exchanges_by_default_and_at_most_200(api, user):
    thread = DialogueThreadFactory(owner=user)
    said = ThoughtFactory(owner=user, origin="inner_voice")
    DialogueExchange.objects.bulk_create(
        DialogueExchange(thread=thread, position=n, synthesis_thought=said) for n in range(1, 202)
    )

    default = api.get(detail_url(thread)).json()["exchanges"]
    assert default["count"] == 201 and len(default["results"]) == 50
    capped = api.get(detail_url(thread), {"limit": 1000, "offset": 1}).json()["exchanges"]
    assert len(capped["results"]) == 200 and capped["results"][0]["position"] == 2


def test_thread_detail_answers_what_its_schema_says(api, anon_api, user):
    thread = DialogueThreadFactory(owner=user)
    DialogueExchangeFactory(thread=thread)
    DialogueExchangeFactory(thread=thread, feedback_thought=None)
    schema = yaml.safe_load(anon_api.get("/api/schema/").content)
    operation = schema["paths"]["/api/v1/inner-voice/threads/{id}/"]["get"]
    assert {"limit", "offset"} <= {p["name"] for p in operation["parameters"]}

    body = api.get(detail_url(thread), {"limit": 1, "offset": 1}).json()

    assert body["exchanges"]["next"] is None and body["exchanges"]["previous"]
    node = operation["responses"]["200"]["content"]["application/json"]["schema"]
    validator = Draft202012Validator({**node, "components": schema["components"]})
    assert list(validator.iter_errors(body)) == []


@pytest.mark.parametrize("query", [{"limit": "x"}, {"limit": 0}, {"offset": -1}, {"offset": "1.5"}])
def test_a_bad_exchange_page_is_a_400_in_the_envelope(api, user, query):
    thread = DialogueThreadFactory(owner=user)
    response = api.get(detail_url(thread), query)
    assert response.status_code == 400
    body = response.json()
    assert body["error_code"] == "invalid" and set(body["fields"]) == set(query)


def test_thread_detail_names_thoughts_as_the_ask_answers_them(api, user, voice):
    source = thought_at(user, 0.9, 1, content="Billing keeps its invoices in Postgres.")
    asked = ask(api, auto_extract_to_kg=False).json()

    thread = api.get(f"{THREADS}{asked['thread']['id']}/").json()
    exchange = thread["exchanges"]["results"][0]

    assert exchange["synthesis_thought_id"] == asked["synth_thought_id"]
    assert exchange["feedback_thought_id"] == asked["feedback_thought_id"]
    assert exchange["thoughts_provided"] == [f"thoughts:{source.id}"]
    # The form every endpoint that takes a thought id takes: it opens the thought.
    opened = api.get(f"/api/v1/thoughts/{exchange['synthesis_thought_id']}/")
    assert opened.status_code == 200 and opened.json()["content"].startswith(SYNTH)


def test_an_exchange_without_feedback_names_none(api, user):
    thread = DialogueThreadFactory(owner=user)
    DialogueExchangeFactory(thread=thread, feedback_thought=None)
    exchange = api.get(detail_url(thread)).json()["exchanges"]["results"][0]
    assert exchange["feedback_thought_id"] is None and exchange["feedback"] is None
    assert exchange["synthesis_thought_id"].startswith("thoughts:")


def test_thread_search_matches_topic_summary_and_stored_thoughts_in_any_case(
    api, user, other_user, django_assert_num_queries
):
    by_topic = DialogueThreadFactory(owner=user, topic="Ledger WORRIES")
    by_summary = DialogueThreadFactory(owner=user, summary="#1: The ledger drifts.")
    by_synthesis = DialogueThreadFactory(owner=user)
    DialogueExchangeFactory(thread=by_synthesis)
    DialogueExchangeFactory(
        thread=by_synthesis,
        synthesis_thought__content="Your LEDGER is kept twice.",
        synthesis_thought__is_private=True,  # the owner's own: searched for the owner
    )
    by_feedback = DialogueThreadFactory(owner=user)
    DialogueExchangeFactory(thread=by_feedback, feedback_thought__content="Which ledger first?")
    unrelated = DialogueThreadFactory(owner=user, topic="sleep", summary="#1: Naps.")
    DialogueExchangeFactory(thread=unrelated)
    theirs = DialogueThreadFactory(owner=other_user, topic="ledger", summary="ledger")
    DialogueExchangeFactory(thread=theirs, synthesis_thought__content="The ledger.")

    with django_assert_num_queries(3):  # token + user, count, page
        page = api.get(THREADS, {"q": "lEdGeR"}).json()

    found = {row["id"]: row["exchange_count"] for row in page["results"]}
    assert page["count"] == 4
    assert found == {
        str(by_topic.id): 0,
        str(by_summary.id): 0,
        str(by_synthesis.id): 2,  # every exchange counted, not only the matching one
        str(by_feedback.id): 1,
    }
    assert str(theirs.id) not in found and str(unrelated.id) not in found


def test_thread_search_never_shows_another_users_threads(other_api, user):
    thread = DialogueThreadFactory(owner=user, topic="ledger")
    DialogueExchangeFactory(thread=thread, synthesis_thought__content="ledger")
    assert other_api.get(THREADS, {"q": "ledger"}).json()["count"] == 0


@pytest.mark.parametrize("blank", ["", "   "])
def test_a_blank_thread_search_lists_every_thread(api, user, blank):
    for _ in range(2):
        DialogueThreadFactory(owner=user)
    assert api.get(THREADS, {"q": blank}).json()["count"] == 2


def test_a_thread_search_over_500_characters_is_a_400(api, user):
    DialogueThreadFactory(owner=user, topic="a" * 200)
    assert api.get(THREADS, {"q": "a" * 500}).status_code == 200
    response = api.get(THREADS, {"q": "a" * 501})
    assert response.status_code == 400
    assert response.json()["error_code"] == "invalid" and "q" in response.json()["fields"]


def test_thread_search_takes_like_wildcards_literally(api, user):
    DialogueThreadFactory(owner=user, topic="100% sure")
    DialogueThreadFactory(owner=user, topic="1000 doubts")
    page = api.get(THREADS, {"q": "100%"}).json()
    assert [row["topic"] for row in page["results"]] == ["100% sure"]


def test_search_restricted_to_inner_voice_finds_own_past_syntheses(api, other_api, user, voice):
    """Semantic search over dialogue history needs no endpoint of its own: POST /api/v1/search
    takes origin=inner_voice (syntheses; inner_voice.feedback gives the questions)."""
    mine = ask(api, auto_extract_to_kg=False).json()["synth_thought_id"]
    ask(other_api, auto_extract_to_kg=False)  # the same words, in another user's synthesis
    ThoughtFactory(owner=user, content=SYNTH, **embedded(text_vector(SYNTH)))  # not the voice's
    off_topic = "Tomatoes want sun in spring."
    ThoughtFactory(
        owner=user, origin="inner_voice", content=off_topic, **embedded(text_vector(off_topic))
    )

    response = api.post(
        "/api/v1/search",
        {
            "query": "What does the billing service depend on?",
            "target": "thoughts",
            "origin": "inner_voice",
            "sim_thresh": 0.1,
        },
        format="json",
    )

    assert response.status_code == 200, response.content
    results = response.json()["thoughts"]["results"]
    assert [f"thoughts:{r['id']}" for r in results] == [mine]
    assert results[0]["origin"] == "inner_voice"
