"""The inner voice's browser pages through Django's test client: ask, read, search and close
threads; what is never stored; errors that keep what was typed; other users' threads."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from innervoice.models import DialogueExchange, DialogueThread
from tests.innervoice.conftest import FEEDBACK, MARKER, QUERY, SYNTH, thought_at
from tests.innervoice.factories import DialogueThreadFactory
from tests.support.openai_server import use_openai_embeddings
from tests.support.redis_server import cache_down
from thoughts.models import Thought

pytestmark = pytest.mark.django_db


@pytest.fixture
def browser(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def ask(browser: Client, **form: str):
    form.setdefault("query", QUERY)
    return browser.post("/inner-voice/ask", form)


def test_pages_need_a_login():
    client = Client()
    for url in ("/inner-voice/", f"/inner-voice/threads/{DialogueThreadFactory().id}/"):
        response = client.get(url)
        assert response.status_code == 302
        assert response["Location"].startswith("/accounts/login/?next=")
    response = client.post("/inner-voice/ask", {"query": QUERY})
    assert response.status_code == 302 and not Thought.objects.exists()


def test_asking_redirects_to_the_thread_which_shows_answer_and_follow_up(browser, voice, caplog):
    caplog.set_level("DEBUG")
    response = ask(browser)
    thread = DialogueThread.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"/inner-voice/threads/{thread.id}/?asked=1#exchange-1"

    page = browser.get(response["Location"]).content.decode()
    assert SYNTH in page
    assert FEEDBACK.splitlines()[0] in page
    assert 'id="exchange-1"' in page and "exchange asked" in page
    # The question is in no row and not on the page the answer is read from.
    assert MARKER not in page
    assert not Thought.objects.filter(content__contains=MARKER).exists()
    assert Thought.objects.filter(origin__startswith="inner_voice").count() == 2
    # Nor in any log line, at any level, on the way through the page.
    assert caplog.records and not any(MARKER in r.getMessage() for r in caplog.records)


def test_asking_again_from_the_thread_page_continues_that_thread(browser, voice):
    ask(browser, topic="billing")
    thread = DialogueThread.objects.get()
    ask(browser, topic="ignored")  # a topic starts a thread: this is a second one
    response = ask(browser, thread_id=str(thread.id))
    assert response["Location"].startswith(f"/inner-voice/threads/{thread.id}/?asked=2")
    assert list(thread.exchanges.values_list("position", flat=True)) == [1, 2]
    assert DialogueThread.objects.get(id=thread.id).topic == "billing"
    page = browser.get(f"/inner-voice/threads/{thread.id}/").content.decode()
    # Newest first: exchange 2 comes before exchange 1.
    assert page.index('id="exchange-2"') < page.index('id="exchange-1"')


@pytest.mark.parametrize(
    ("query", "message"),
    [("   ", "Write a question first."), ("x" * 4001, "keep it under 4,000 characters")],
)
def test_a_bad_question_is_refused_and_kept_in_the_form(browser, voice, query, message):
    response = ask(browser, query=query)
    assert response.status_code == 400
    page = response.content.decode()
    assert message in page
    assert re.search(r'<textarea id="query"[^>]*>' + re.escape(query) + "</textarea>", page)
    assert not Thought.objects.exists() and not DialogueThread.objects.exists()


def test_an_overlong_topic_is_refused_and_the_question_kept(browser, voice):
    response = ask(browser, topic="t" * 256)
    assert response.status_code == 400
    assert "topic under 255 characters" in response.content.decode()
    assert QUERY in response.content.decode()
    assert not DialogueThread.objects.exists()


def test_an_embedding_failure_says_so_stores_nothing_and_keeps_the_question(
    browser, settings, openai_stub, voice
):
    use_openai_embeddings(settings, openai_stub)
    openai_stub.fail_next(500, times=5)
    response = ask(browser)
    assert response.status_code == 503
    page = response.content.decode()
    assert "Nothing was stored" in page and QUERY in page
    assert openai_stub.base_url not in page  # the provider's address is the operator's business
    assert not Thought.objects.exists() and not DialogueThread.objects.exists()


def test_asking_on_a_closed_thread_is_refused_with_the_question_kept(browser, voice):
    ask(browser)
    thread = DialogueThread.objects.get()
    browser.post(f"/inner-voice/threads/{thread.id}/close")
    response = ask(browser, thread_id=str(thread.id))
    assert response.status_code == 409
    page = response.content.decode()
    assert "That thread is closed" in page
    # Back in the main page's form, which asks without the closed thread's id.
    assert re.search(r'<textarea id="query"[^>]*>' + re.escape(QUERY) + "</textarea>", page)
    assert 'name="thread_id"' not in page and 'id="topic"' in page
    assert DialogueExchange.objects.count() == 1


@pytest.mark.parametrize("field", ["query", "topic"])
def test_a_null_character_is_refused_before_any_model_is_asked(browser, voice, field):
    form = {"query": QUERY, "topic": "billing"}
    form[field] = form[field] + "\x00 and more"
    response = ask(browser, **form)
    assert response.status_code == 400
    assert "null character" in response.content.decode()
    assert voice.requests == []  # no synthesis, no follow-up: nothing paid for
    assert not Thought.objects.exists() and not DialogueThread.objects.exists()


def test_line_breaks_count_once_as_the_textarea_shows_them(browser, voice):
    # Browsers send a textarea's line breaks as CRLF: 3,600 characters on screen, 4,500 sent.
    question = "why\r\n" * 900
    response = ask(browser, query=question)
    assert response.status_code == 302
    assert DialogueExchange.objects.count() == 1


def test_the_page_counts_against_the_apis_per_user_rate(browser, voice, settings):
    settings.API_THROTTLE_USER = "2/minute"
    assert ask(browser).status_code == 302
    assert ask(browser).status_code == 302
    response = ask(browser)
    assert response.status_code == 429
    page = response.content.decode()
    assert "asked too often" in page and QUERY in page
    assert DialogueExchange.objects.count() == 2


def test_with_the_rate_on_and_its_cache_down_the_form_comes_back_with_a_503(
    browser, voice, settings, caplog
):
    settings.API_THROTTLE_USER = "100/minute"
    with cache_down() as port:
        response = ask(browser)
    assert response.status_code == 503
    page = response.content.decode()
    assert "nothing was stored" in page and QUERY in page and str(port) not in page
    assert any(f"127.0.0.1:{port}" in r.getMessage() for r in caplog.records)
    assert voice.requests == [] and not Thought.objects.exists()


def test_closing_a_thread_closes_it_and_hides_the_ask_form(browser, voice):
    ask(browser)
    thread = DialogueThread.objects.get()
    response = browser.post(f"/inner-voice/threads/{thread.id}/close")
    assert response.status_code == 302
    assert DialogueThread.objects.get().status == DialogueThread.Status.CLOSED
    page = browser.get(f"/inner-voice/threads/{thread.id}/").content.decode()
    assert 'id="ask-form"' not in page and "closed (closed)" in page


def test_another_users_thread_is_a_404_to_read_close_or_ask_on(browser, other_user, voice):
    theirs = DialogueThreadFactory(owner=other_user)
    assert browser.get(f"/inner-voice/threads/{theirs.id}/").status_code == 404
    assert browser.post(f"/inner-voice/threads/{theirs.id}/close").status_code == 404
    assert ask(browser, thread_id=str(theirs.id)).status_code == 404
    assert DialogueThread.objects.get(id=theirs.id).status == DialogueThread.Status.OPEN
    assert not Thought.objects.exists()


def test_the_home_page_lists_only_your_threads_and_searches_them(browser, other_user, voice):
    ask(browser, topic="billing ledgers")
    ask(browser, topic="garden plans")
    DialogueThreadFactory(owner=other_user, topic="billing secrets")
    page = browser.get("/inner-voice/").content.decode()
    assert "billing ledgers" in page and "garden plans" in page
    assert "billing secrets" not in page

    found = browser.get("/inner-voice/", {"q": "GARDEN"}).content.decode()
    assert "garden plans" in found and "billing ledgers" not in found
    theirs = browser.get("/inner-voice/", {"q": "secrets"}).content.decode()
    assert "billing secrets" not in theirs and "No thread of yours mentions" in theirs
    # The stored answers are searched too, not only the topics.
    by_answer = browser.get("/inner-voice/", {"q": "ledgers there"}).content.decode()
    assert "billing ledgers" in by_answer and "garden plans" in by_answer
    none = browser.get("/inner-voice/", {"q": "nothing like this"}).content.decode()
    assert "No thread of yours mentions" in none


def test_private_material_makes_a_private_exchange_marked_on_the_page(browser, user, voice):
    thought_at(user, 0.9, 1, content="My private billing worry.", is_private=True)
    ask(browser, include_private="on")
    synthesis = Thought.objects.get(origin="inner_voice")
    assert synthesis.is_private
    thread = DialogueThread.objects.get()
    page = browser.get(f"/inner-voice/threads/{thread.id}/").content.decode()
    assert '<span class="tag">private</span>' in page


def test_long_threads_are_paged(browser, user, voice):
    ask(browser)
    thread = DialogueThread.objects.get()
    for _ in range(20):
        ask(browser, thread_id=str(thread.id), query=f"{QUERY} again")
    first = browser.get(f"/inner-voice/threads/{thread.id}/").content.decode()
    assert 'id="exchange-21"' in first and 'id="exchange-1"' not in first
    assert "Page 1 of 2" in first
    second = browser.get(f"/inner-voice/threads/{thread.id}/", {"page": 2}).content.decode()
    assert 'id="exchange-1"' in second and 'id="exchange-2"' not in second


def test_asking_on_in_a_thread_from_its_page_continues_it_twice(browser, voice):
    ask(browser)
    thread = DialogueThread.objects.get()
    for _ in range(2):
        response = ask(browser, thread_id=str(thread.id), query="And then?")
        assert response.status_code == 302, response.content.decode()[-800:]
    assert thread.exchanges.count() == 3


def test_an_offline_answer_reads_as_prose_and_its_sources_are_links(browser, user):
    """No chat model: the offline composer answers. The page shows its words without ids or
    the stored Sources line, and names each source once, as a link to its page."""
    from tests.innervoice.conftest import entity_at

    source = thought_at(user, 0.9, 4, content="Billing keeps its invoices in Postgres.")
    entity = entity_at(0.85, 5, name="Postgres", entity_type="technology")
    page = browser.get(ask(browser)["Location"]).content.decode()
    found = re.search(r'<div class="answer">(.*?)</div>', page, re.S)
    assert found is not None
    answer = found.group(1)
    assert "Billing keeps its invoices in Postgres." in answer
    assert "thoughts:" not in answer and "kge:" not in answer and "Sources" not in answer
    assert page.count("Sources:") == 1
    assert f'href="/thoughts/{source.pk}/" class="tag source"' in page
    assert f'href="/kg/entities/{entity.pk}/" class="tag source"' in page
    stored = Thought.objects.get(origin="inner_voice").content  # the spec's Sources line stays
    assert f"thoughts:{source.pk}" in stored and f"kge:{entity.pk}" in stored
    # The composer's lines are a list on the page, and who answered is metadata beside it,
    # not a provider id in the answer's words (the stored text keeps them as written).
    assert "<ul><li>Billing keeps its invoices in Postgres.</li>" in answer
    assert "- Billing" not in answer and "offline-composer" not in answer
    assert "(offline-composer):\n- " in stored
    meta = re.search(r'<p class="row-meta muted">#1 ·(.*?)</p>', page, re.S)
    assert meta is not None and "answered by the offline composer" in meta.group(1)
    # The links come in the order the answer drew on them, as that line cites them.
    cited = stored.rpartition("Sources: ")[2].split(", ")
    hrefs = re.findall(r'href="([^"]+)" class="tag source"', page)
    pages = {
        f"thoughts:{source.pk}": f"/thoughts/{source.pk}/",
        f"kge:{entity.pk}": f"/kg/entities/{entity.pk}/",
    }
    assert hrefs == [pages[ref] for ref in cited if ref in pages]


def test_an_answers_lines_show_as_a_list_only_where_they_are_one():
    from innervoice.pages import answer_display

    blocks, by = answer_display("Two things stand out.\n- the queue\n- the cache\nBoth are new.")
    assert blocks == [
        ("text", "Two things stand out."),
        ("list", ["the queue", "the cache"]),
        ("text", "Both are new."),
    ]
    assert by == ""  # a model's answer does not say which model wrote it
    prose, _ = answer_display("A line - with a dash inside.\nAnd a second line.")
    assert prose == [("text", "A line - with a dash inside.\nAnd a second line.")]


def test_a_threads_page_leads_back_and_names_its_form_plainly(browser, voice):
    ask(browser)
    thread = DialogueThread.objects.get()
    page = browser.get(f"/inner-voice/threads/{thread.id}/").content.decode()
    assert 'id="all-threads">← All threads</a>' in page  # as "← All thoughts" elsewhere
    assert '<label for="query">Ask a follow-up in this thread</label>' in page
