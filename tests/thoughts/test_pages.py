"""The thought pages over HTTP (the browser flows are in tests/e2e): sign-in, only your own
thoughts, the list endpoint's filters, the chain and the delete through the API's service."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from tests.thoughts.factories import ThoughtFactory
from thoughts.models import Thought

pytestmark = pytest.mark.django_db


def signed_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_the_pages_need_a_sign_in(user: Any) -> None:
    mine: Any = ThoughtFactory(owner=user)
    for url in ("/thoughts/", f"/thoughts/{mine.pk}/", f"/thoughts/{mine.pk}/delete"):
        response = Client().get(url)
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")


def test_another_users_thought_is_a_404_and_never_listed(user: Any, other_user: Any) -> None:
    theirs: Any = ThoughtFactory(owner=other_user, content="Bob's secret plan")
    client = signed_in(user)
    assert client.get(f"/thoughts/{theirs.pk}/").status_code == 404
    assert client.get(f"/thoughts/{theirs.pk}/delete").status_code == 404
    assert client.post(f"/thoughts/{theirs.pk}/delete").status_code == 404
    assert "Bob's secret plan" not in client.get("/thoughts/").content.decode()
    assert Thought.objects.filter(pk=theirs.pk).exists()


def test_the_timeline_filters_like_the_list_endpoint(user: Any) -> None:
    ThoughtFactory(owner=user, content="tagged deploy note", tags=["deploy"], mode="debug")
    ThoughtFactory(owner=user, content="untagged musing", mode="question")
    client = signed_in(user)
    page = client.get("/thoughts/", {"tags": "deploy"}).content.decode()
    assert "tagged deploy note" in page and "untagged musing" not in page
    page = client.get("/thoughts/", {"mode": "question"}).content.decode()
    assert "untagged musing" in page and "tagged deploy note" not in page
    bad = client.get("/thoughts/", {"confidence_gte": "high", "origin": "nowhere"})
    assert bad.status_code == 400
    page = bad.content.decode()
    # Named by the form's labels, and each message beside its own field.
    assert "Confidence at least: A valid number is required." in page
    assert "confidence gte" not in page and "confidence_gte:" not in page
    assert (
        'id="f-conf-min" value="high" min="0" max="1" step="0.05" aria-invalid="true" '
        'aria-describedby="err-confidence_gte">' in page
    )
    assert '<small id="err-confidence_gte" class="field-error">A valid number is required.' in page
    assert 'aria-describedby="err-origin"' in page and 'id="err-origin"' in page
    assert 'aria-describedby="err-mode"' not in page
    assert "<details open>" in page  # the filters with the errors are shown


def test_a_thoughts_page_is_titled_by_its_first_words(user: Any) -> None:
    mine: Any = ThoughtFactory(owner=user, content="Pin the serializer and budget the payload.")
    page = signed_in(user).get(f"/thoughts/{mine.pk}/").content.decode()
    assert "<title>Pin the serializer and budget the payload. · Your thoughts" in page


def test_htmx_gets_the_results_alone(user: Any) -> None:
    ThoughtFactory(owner=user, content="only the results")
    page = signed_in(user).get("/thoughts/", HTTP_HX_REQUEST="true").content.decode()
    assert "only the results" in page and "<nav" not in page.split('id="timeline"')[0]


def test_a_thought_shows_its_chain_with_links_and_unresolved_ones(user: Any) -> None:
    import uuid

    first: Any = ThoughtFactory(owner=user, content="first step")
    second: Any = ThoughtFactory(owner=user, content="second step", previous_thought=first)
    orphan: Any = ThoughtFactory(owner=user, content="orphan", revises_thought_id=uuid.uuid4())
    page = signed_in(user).get(f"/thoughts/{second.pk}/").content.decode()
    assert f'href="/thoughts/{first.pk}/"' in page
    assert 'id="chain-graph"' in page and f'data-key="{first.pk}"' in page
    orphaned = signed_in(user).get(f"/thoughts/{orphan.pk}/").content.decode()
    assert "unresolved" in orphaned and "(not found)" in orphaned


def test_delete_asks_first_then_deletes_through_the_service(user: Any) -> None:
    mine: Any = ThoughtFactory(owner=user, content="to be deleted")
    client = signed_in(user)
    assert "Delete this thought?" in client.get(f"/thoughts/{mine.pk}/delete").content.decode()
    assert Thought.objects.filter(pk=mine.pk).exists()
    response = client.post(f"/thoughts/{mine.pk}/delete", follow=True)
    assert not Thought.objects.filter(pk=mine.pk).exists()
    assert "The thought was deleted." in response.content.decode()


def test_a_thought_shows_its_memories_with_their_receipts_and_its_verification(
    user: Any, other_user: Any
) -> None:
    from tests.thoughts.factories import EntityFactory

    shared: Any = EntityFactory(name="Postgres")
    private_source: Any = ThoughtFactory(owner=other_user, is_private=True)
    hidden: Any = EntityFactory(name="Bob's private memory", source_thought=private_source)
    receipt = {"similarity": 0.8123, "score": 0.7, "rank": 1, "reason": "threshold"}
    mine: Any = ThoughtFactory(
        owner=user,
        injected_memories=[
            {"kind": "entity", "id": shared.pk, **receipt},
            {"kind": "entity", "id": hidden.pk, **receipt},
        ],
        verification={"hypothesis": "Postgres is the bottleneck", "confidence_score": 0.42,
                      "supporting": [{"name": "Postgres", "similarity": 0.8}],
                      "contradicting": [], "suggested_revision": None},
    )  # fmt: skip
    page = signed_in(user).get(f"/thoughts/{mine.pk}/").content.decode()
    assert f'href="/kg/entities/{shared.pk}/"' in page
    assert "0.812" in page and "above the similarity threshold" in page
    assert "Bob&#x27;s private memory" not in page and "Bob's private memory" not in page
    assert "no longer available" in page  # the hidden one reads as gone
    assert 'id="verification-score">0.42<' in page


def test_a_thoughts_origin_reads_as_words(user: Any) -> None:
    mine: Any = ThoughtFactory(owner=user, content="What would confirm it?")
    mine.origin = "inner_voice.feedback"
    mine.save(update_fields=["origin"])
    client = signed_in(user)
    for url in ("/thoughts/", f"/thoughts/{mine.pk}/"):
        page = client.get(url).content.decode()
        assert "· inner voice feedback" in page and "inner_voice.feedback" not in page.replace(
            'value="inner_voice.feedback"', ""
        )
