"""Dialogue threads (spec 001): continue, new thread, timeout, close, other users, listing and
summarising past the history window."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from innervoice.ask_threads import thread_for_write, thread_plan
from innervoice.models import DialogueExchange, DialogueThread
from innervoice.services import AskParams
from tests.innervoice.conftest import FEEDBACK, SYNTH, ask, thought_at
from tests.innervoice.factories import DialogueThreadFactory
from thoughts.models import Thought

pytestmark = pytest.mark.django_db


def test_calls_continue_the_open_thread(api, voice):
    first = ask(api, auto_extract_to_kg=False).json()["thread"]
    second = ask(api, auto_extract_to_kg=False).json()["thread"]
    assert second["id"] == first["id"]
    assert (first["position"], second["position"]) == (1, 2)
    assert DialogueThread.objects.count() == 1


def test_new_thread_starts_one_with_its_topic_and_later_calls_continue_it(api, voice):
    first = ask(api).json()["thread"]
    new = ask(api, new_thread="memory patterns").json()["thread"]
    assert new["id"] != first["id"] and new["topic"] == "memory patterns"
    assert new["position"] == 1
    assert ask(api).json()["thread"]["id"] == new["id"]
    explicit = ask(api, thread_id=first["id"]).json()["thread"]
    assert (explicit["id"], explicit["position"]) == (first["id"], 2)


def test_an_idle_thread_times_out_and_a_new_one_starts(api, voice, settings):
    settings.INNER_VOICE_TIMEOUT = 3600
    first = ask(api).json()["thread"]
    DialogueThread.objects.filter(id=first["id"]).update(
        last_interaction=timezone.now() - timedelta(seconds=3601)
    )
    second = ask(api).json()["thread"]
    assert second["id"] != first["id"] and second["position"] == 1
    old = DialogueThread.objects.get(id=first["id"])
    assert (old.status, old.close_reason) == ("closed", "timeout")
    response = ask(api, thread_id=first["id"])
    assert response.status_code == 409


def test_continuing_a_timed_out_thread_by_id_is_a_409(api, voice, user):
    thread = DialogueThreadFactory(owner=user)
    DialogueThread.objects.filter(id=thread.id).update(
        last_interaction=timezone.now() - timedelta(hours=2)
    )
    response = ask(api, thread_id=str(thread.id))
    assert response.status_code == 409 and "thread_id" in response.json()["fields"]
    assert not Thought.objects.exists()
    thread.refresh_from_db()  # it ended when it timed out, and the list says so
    assert (thread.status, thread.close_reason) == ("closed", "timeout")


def test_closed_thread_refuses_new_exchanges_with_409(api, voice):
    thread = ask(api).json()["thread"]
    closed = api.post(f"/api/v1/inner-voice/threads/{thread['id']}/close/")
    assert closed.status_code == 200
    assert closed.json()["status"] == "closed" and closed.json()["close_reason"] == "closed"
    count = Thought.objects.count()
    response = ask(api, thread_id=thread["id"])
    assert response.status_code == 409 and response.json()["error_code"] == "conflict"
    assert Thought.objects.count() == count
    again = api.post(f"/api/v1/inner-voice/threads/{thread['id']}/close/")
    assert again.status_code == 409
    assert ask(api).json()["thread"]["id"] != thread["id"]  # the next call starts a new one


def test_another_users_thread_is_a_404_everywhere(api, other_api, voice):
    theirs = ask(other_api).json()["thread"]["id"]
    count = Thought.objects.count()
    assert api.get(f"/api/v1/inner-voice/threads/{theirs}/").status_code == 404
    assert api.post(f"/api/v1/inner-voice/threads/{theirs}/close/").status_code == 404
    response = ask(api, thread_id=theirs)
    assert response.status_code == 404 and response.json()["error_code"] == "not_found"
    assert Thought.objects.count() == count
    assert api.get("/api/v1/inner-voice/threads/").json()["count"] == 0
    assert api.get("/api/v1/inner-voice/threads/not-a-uuid/").status_code == 404
    missing = "0b6f3c1e-1111-4a4a-9999-123456789abc"
    assert ask(api, thread_id=missing).status_code == 404


def test_thread_list_is_paginated_and_own(api, user, other_user, django_assert_num_queries):
    for _ in range(3):
        DialogueThreadFactory(owner=user)
    DialogueThreadFactory(owner=other_user)
    with django_assert_num_queries(3):  # token + user, count, page
        page = api.get("/api/v1/inner-voice/threads/", {"limit": 2}).json()
    assert page["count"] == 3 and len(page["results"]) == 2 and page["next"]
    assert {"id", "topic", "status", "exchange_count"} <= set(page["results"][0])
    rest = api.get(page["next"]).json()
    assert len(rest["results"]) == 1 and rest["next"] is None
    assert api.get("/api/v1/inner-voice/threads/", {"limit": "x"}).status_code == 400


def test_thread_detail_lists_its_exchanges_with_their_thoughts(api, voice):
    thread = ask(api).json()
    ask(api)
    detail = api.get(f"/api/v1/inner-voice/threads/{thread['thread']['id']}/").json()
    assert detail["exchange_count"] == 2
    first = detail["exchanges"]["results"][0]
    assert first["position"] == 1
    assert first["synthesis_thought_id"] == thread["synth_thought_id"]
    assert first["synthesis"].startswith(SYNTH)
    assert first["feedback"] == "\n".join(FEEDBACK.splitlines()[:3])


def test_history_holds_syntheses_and_feedback_never_questions(api, voice):
    ask(api, query="First question QONEMARK about billing?")
    voice.requests.clear()
    ask(api, query="Second question about Postgres?")
    synth_prompt = next(
        str(r["body"]) for r in voice.requests if "inner voice" in str(r["body"]["messages"][0])
    )
    assert "You synthesised: " + SYNTH in synth_prompt
    assert "You then asked: Which invoice path fails first" in synth_prompt
    assert "QONEMARK" not in synth_prompt


def test_exchanges_past_the_window_are_summarised(api, voice, settings):
    settings.INNER_VOICE_HISTORY = 2
    for _ in range(4):
        thread_id = ask(api, auto_extract_to_kg=False).json()["thread"]["id"]
    thread = DialogueThread.objects.get(id=thread_id)
    flags = list(DialogueExchange.objects.order_by("position").values_list("summarized", flat=True))
    assert flags == [True, True, False, False]
    first_sentence = "The billing service depends on Postgres for invoices."
    assert thread.summary == f"#1: {first_sentence}\n#2: {first_sentence}"
    voice.requests.clear()
    ask(api, auto_extract_to_kg=False)
    synth_prompt = next(
        str(r["body"]) for r in voice.requests if "inner voice" in str(r["body"]["messages"][0])
    )
    assert "Earlier in this dialogue (summary)" in synth_prompt
    assert synth_prompt.count("You synthesised:") == 2


def test_asks_made_at_once_without_a_thread_share_the_one_the_first_starts(api, user, voice):
    """Two asks that both found no open thread (the second planned before the first stored its
    exchange) end in one thread, not two."""
    planned_early = thread_plan(owner=user, params=AskParams(query="q"))
    assert planned_early.thread is None and planned_early.implicit
    first = ask(api, auto_extract_to_kg=False).json()["thread"]
    with transaction.atomic():
        taken = thread_for_write(owner=user, plan=planned_early)
    assert str(taken.id) == first["id"]
    assert DialogueThread.objects.count() == 1


def test_offline_answers_are_summarised_by_what_they_found_not_their_header(api, user, settings):
    # No chat model: the offline composer answers from the stored thought, under a header
    # that is the same every time.
    settings.INNER_VOICE_HISTORY = 1
    thought_at(user, 0.9, 1, content="Billing deploys fail when the migration locks invoices.")
    for _ in range(3):
        thread_id = ask(api, auto_extract_to_kg=False).json()["thread"]["id"]
    summary = DialogueThread.objects.get(id=thread_id).summary
    line = "Billing deploys fail when the migration locks invoices."
    assert summary == f"#1: {line}\n#2: {line}", summary
