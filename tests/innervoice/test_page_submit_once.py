"""The ask form sent twice (a double click, a resend) asks once: the second post lands on the
first one's answer, even while the first is still being answered; a failed ask gives its
form's token back; separate forms ask separately."""

from __future__ import annotations

import re
import threading
import time
from typing import Any

import pytest
from django.core.cache import cache
from django.db import connections
from django.test import Client

from innervoice import submissions
from innervoice.models import DialogueExchange, DialogueThread
from tests.innervoice.conftest import QUERY, route
from tests.support.openai_server import use_openai_embeddings
from tests.support.redis_server import cache_down
from thoughts.models import Thought


@pytest.fixture
def browser(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def form_token(browser: Client, url: str = "/inner-voice/") -> str:
    page = browser.get(url).content.decode()
    match = re.search(r'name="ask_token" value="([0-9a-f]{32})"', page)
    assert match, "the ask form carries no token"
    return match.group(1)


def ask(browser: Client, token: str, **form: str) -> Any:
    return browser.post("/inner-voice/ask", {"query": QUERY, "ask_token": token, **form})


def synth_requests(voice: Any) -> int:
    return sum(
        any(m["role"] == "system" and "inner voice" in m["content"] for m in messages)
        for messages in (r["body"].get("messages", []) for r in voice.requests)
    )


@pytest.mark.django_db
def test_every_rendering_of_the_form_has_its_own_token(browser, voice):
    assert form_token(browser) != form_token(browser)
    ask(browser, form_token(browser))
    thread = DialogueThread.objects.get()
    assert form_token(browser, f"/inner-voice/threads/{thread.id}/")  # the thread's form too


@pytest.mark.django_db
def test_the_same_form_sent_twice_asks_once_and_both_land_on_its_answer(browser, voice):
    token = form_token(browser)
    first, second = ask(browser, token), ask(browser, token)
    assert first.status_code == second.status_code == 302
    assert second["Location"] == first["Location"]
    assert DialogueExchange.objects.count() == 1
    assert Thought.objects.filter(origin__startswith="inner_voice").count() == 2
    assert synth_requests(voice) == 1  # the model was asked once


@pytest.mark.django_db
def test_two_forms_with_the_same_question_ask_twice(browser, voice):
    first = ask(browser, form_token(browser))
    second = ask(browser, form_token(browser))
    assert first.status_code == second.status_code == 302
    assert first["Location"] != second["Location"]
    assert DialogueExchange.objects.count() == 2


@pytest.mark.django_db
def test_a_failed_ask_gives_its_token_back_so_the_same_form_can_be_sent_again(
    browser, settings, openai_stub, voice
):
    use_openai_embeddings(settings, openai_stub)
    token = form_token(browser)
    openai_stub.fail_next(500, times=1)  # the suite's provider does not retry
    failed = ask(browser, token)
    assert failed.status_code == 503 and not DialogueExchange.objects.exists()
    again = ask(browser, token)  # the embedding service is back
    assert again.status_code == 302, again.content.decode()[:500]
    assert DialogueExchange.objects.count() == 1


@pytest.mark.django_db
def test_a_post_without_a_token_still_asks(browser, voice):
    # An older page, or a script posting the form: no guard, no refusal.
    for _ in range(2):
        assert browser.post("/inner-voice/ask", {"query": QUERY}).status_code == 302
    assert DialogueExchange.objects.count() == 2


@pytest.mark.django_db(transaction=True)  # two requests, each on its own database connection
def test_a_second_post_while_the_first_is_answered_waits_and_lands_on_its_answer(user, voice):
    started = threading.Event()

    def slow(messages: list[dict[str, Any]]) -> str:
        started.set()
        time.sleep(1.0)  # the synthesis takes a while: the double click comes meanwhile
        return route(messages)

    voice.chat_fn = slow
    clients = [Client(), Client()]
    for client in clients:
        client.force_login(user)
    token = form_token(clients[0])
    answers: list[Any] = [None, None]

    def post(i: int) -> None:
        try:
            answers[i] = ask(clients[i], token)
        finally:
            if i == 0:  # the thread's own connection: left open, the test database stays busy
                connections.close_all()

    first = threading.Thread(target=post, args=(0,))
    first.start()
    assert started.wait(10), "the first ask never reached the model"
    post(1)  # the double click, here, while the first is with the model
    first.join(30)
    assert [a.status_code for a in answers] == [302, 302]
    assert answers[1]["Location"] == answers[0]["Location"]
    assert DialogueExchange.objects.count() == 1
    assert synth_requests(voice) == 1


@pytest.mark.django_db
def test_a_second_post_gives_up_waiting_with_a_409_that_says_the_answer_is_coming(
    browser, user, voice, monkeypatch
):
    token = form_token(browser)
    # A first post with this form is with the model (claimed, not done), for longer than the
    # second will wait.
    cache.add(f"innervoice:page-ask:{user.pk}:{token}", "pending", 60)
    monkeypatch.setattr(submissions, "WAIT_SECONDS", 0.3)
    response = ask(browser, token)
    assert response.status_code == 409
    assert "still being answered" in response.content.decode()
    assert not DialogueExchange.objects.exists() and voice.requests == []


@pytest.mark.django_db
def test_with_the_cache_down_the_form_comes_back_with_a_503_and_the_question(
    browser, voice, caplog
):
    token = form_token(browser)
    with cache_down() as port:
        response = ask(browser, token)
    assert response.status_code == 503
    page = response.content.decode()
    assert "nothing was stored" in page and QUERY in page and str(port) not in page
    assert any(f"127.0.0.1:{port}" in r.getMessage() for r in caplog.records)
    assert voice.requests == [] and not Thought.objects.exists()
