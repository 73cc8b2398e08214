"""The Thought admin through its real pages, logged in as a superuser."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from tests.support.pages import unmasked
from tests.thoughts.factories_read import ThoughtFactory
from thoughts.models import Thought

pytestmark = pytest.mark.django_db
CHANGELIST = reverse("admin:thoughts_thought_changelist")


@pytest.fixture
def admin_client(db: None) -> Client:
    root = User.objects.create_superuser("root", password="pw-root")
    client = Client()
    client.force_login(root)
    return client


def listed(resp) -> list[Thought]:
    assert resp.status_code == 200
    return list(resp.context["cl"].result_list)


def change_page(thought) -> str:
    return reverse("admin:thoughts_thought_change", args=[thought.pk])


def test_changelist_filters_by_mode_origin_privacy_and_date(admin_client, user, other_user):
    plan = ThoughtFactory(owner=user, mode="plan", origin="tool")
    secret = ThoughtFactory(owner=other_user, mode="question", is_private=True)
    old = ThoughtFactory(owner=user, mode="question", created_at=datetime(2024, 1, 5, tzinfo=UTC))
    assert len(listed(admin_client.get(CHANGELIST))) == 3
    assert listed(admin_client.get(CHANGELIST, {"mode": "plan"})) == [plan]
    assert listed(admin_client.get(CHANGELIST, {"origin": "tool"})) == [plan]
    assert listed(admin_client.get(CHANGELIST, {"is_private__exact": "1"})) == [secret]
    in_2024 = {
        "created_at__gte": "2024-01-01 00:00:00+00:00",
        "created_at__lt": "2025-01-01 00:00:00+00:00",
    }
    assert listed(admin_client.get(CHANGELIST, in_2024)) == [old]


def test_search_matches_content_but_never_the_words_of_a_private_thought(admin_client, user):
    public = ThoughtFactory(owner=user, content="The cache stampede after deploys")
    ThoughtFactory(owner=user, content="The cache of letters I never sent", is_private=True)
    by_session = ThoughtFactory(owner=user, is_private=True, session_id="cache-review")
    assert set(listed(admin_client.get(CHANGELIST, {"q": "cache"}))) == {public, by_session}


def test_a_search_of_several_words_treats_each_word_alike(admin_client, user):
    """Each word must be found in the metadata of a private thought, never in its words; a
    private thought whose owner and session the words name is found (the whole term was once
    compared with each field, so "alice cache-review" found nothing)."""
    by_session = ThoughtFactory(owner=user, is_private=True, session_id="cache-review")
    ThoughtFactory(owner=user, is_private=True, content="cache letters", session_id="s2")
    term = f"{user.username} cache-review"
    assert listed(admin_client.get(CHANGELIST, {"q": term})) == [by_session]
    # One word in the metadata is not enough when the other is only in the words.
    assert listed(admin_client.get(CHANGELIST, {"q": f"{user.username} letters"})) == []


def test_private_content_is_not_shown_in_the_list_or_the_page(admin_client, other_user):
    secret = ThoughtFactory(owner=other_user, content="My diagnosis, told no one", is_private=True)
    page = admin_client.get(CHANGELIST)
    assert b"diagnosis" not in page.content
    assert b"visible only to its owner" in page.content
    detail = admin_client.get(change_page(secret))
    assert detail.status_code == 200
    assert b"diagnosis" not in detail.content


def test_change_page_shows_embedding_metadata_and_links_to_neighbours(admin_client, user):
    head = ThoughtFactory(owner=user, content="Head of the line")
    pending = uuid.uuid4()
    thought = ThoughtFactory(
        owner=user, content="Middle", previous_thought=head, revises_thought_id=pending
    )
    after = ThoughtFactory(owner=user, content="After the middle", previous_thought=thought)
    branch = ThoughtFactory(owner=user, content="A side road", branch_from=thought)
    resp = admin_client.get(change_page(thought))
    assert resp.status_code == 200
    html = resp.content.decode()
    assert "feature-hash-384" in html
    assert "Embedding" in html
    for neighbour in (head, after, branch):
        assert change_page(neighbour) in html
    assert f"{pending} (not written yet)" in html
    assert 'name="content"' not in html  # read-only: no form field to edit the text


def test_thoughts_cannot_be_added_or_edited_in_the_admin(admin_client, user):
    thought = ThoughtFactory(owner=user, content="original words")
    assert admin_client.get(reverse("admin:thoughts_thought_add")).status_code == 403
    admin_client.post(change_page(thought), {"content": "changed"})
    thought.refresh_from_db()
    assert thought.content == "original words"


# Each refused lookup with a value that matches the private thought and one that does not.
WORDS_LOOKUPS = [
    ("content__startswith", "My diagnosis", "Nothing like it"),
    ("content__regex", "^My d", "^Zz"),
    ("content__icontains", "told no one", "told everyone"),
    ("enriched_content__icontains", "oncologist", "dentist"),
    ("framework_analysis__icontains", "denial", "acceptance"),
    ("framework_analysis__stage", "denial", "acceptance"),
    ("verification__hypothesis__startswith", "It is mal", "It is ben"),
    ("verification__icontains", "malignant", "benign"),
    ("injected_memories__icontains", "Quillport", "Harbour"),
    ("tags__contains", "{oncology}", "{gardening}"),
    ("previous_thought__content__startswith", "My diagnosis", "Nothing like it"),
    ("next_thoughts__content__startswith", "Follow-up", "Nothing like it"),
]


@pytest.mark.parametrize(("lookup", "hit", "miss"), WORDS_LOOKUPS)
def test_url_filters_on_a_thoughts_words_are_refused_alike_on_a_hit_and_a_miss(
    admin_client, other_user, lookup, hit, miss
):
    """Django allows a URL filter on any field of the model: ``?content__startswith=`` listed
    a private thought on a hit and nothing on a miss, reading its words a letter at a time."""
    secret = ThoughtFactory(
        owner=other_user,
        is_private=True,
        content="My diagnosis, told no one",
        enriched_content="The oncologist called",
        framework_analysis={"stage": "denial"},
        verification={"hypothesis": "It is malignant"},
        injected_memories=[{"name": "Quillport"}],
        tags=["oncology"],
    )
    ThoughtFactory(owner=other_user, is_private=True, content="Follow-up", previous_thought=secret)
    on_hit = admin_client.get(CHANGELIST, {"id__exact": secret.pk, lookup: hit})
    on_miss = admin_client.get(CHANGELIST, {"id__exact": secret.pk, lookup: miss})
    assert on_hit.status_code == on_miss.status_code == 400
    assert unmasked(on_hit.content) == unmasked(on_miss.content)
    for word in (b"diagnosis", b"oncologist", b"denial", b"malignant", b"Quillport", b"oncology"):
        assert word not in on_hit.content


def test_url_filters_on_metadata_and_the_lists_own_filters_still_work(
    admin_client, user, other_user
):
    mine = ThoughtFactory(owner=user, session_id="s-1", chain_id="c-1", mode="plan")
    secret = ThoughtFactory(owner=other_user, is_private=True, session_id="s-2")
    after = ThoughtFactory(
        owner=user, previous_thought=mine, created_at=datetime(2024, 3, 2, tzinfo=UTC)
    )
    assert listed(admin_client.get(CHANGELIST, {"owner__id__exact": other_user.pk})) == [secret]
    assert listed(admin_client.get(CHANGELIST, {"id__exact": secret.pk})) == [secret]
    assert listed(admin_client.get(CHANGELIST, {"session_id": "s-1"})) == [mine]
    assert listed(admin_client.get(CHANGELIST, {"chain_id__exact": "c-1"})) == [mine]
    assert listed(admin_client.get(CHANGELIST, {"previous_thought": mine.pk})) == [after]
    assert listed(admin_client.get(CHANGELIST, {"mode__exact": "plan"})) == [mine]
    assert listed(admin_client.get(CHANGELIST, {"is_private__exact": "1"})) == [secret]
    assert listed(admin_client.get(CHANGELIST, {"created_at__year": "2024"})) == [after]
    assert listed(admin_client.get(CHANGELIST, {"q": "s-2"})) == [secret]


def test_a_refused_url_filter_is_one_warning_line_without_a_traceback(admin_client, caplog):
    """Django logs a refused lookup as an ERROR with its traceback, for a 400 it chose."""
    assert admin_client.get(CHANGELIST, {"content__startswith": "x"}).status_code == 400
    [record] = [r for r in caplog.records if r.name.startswith("django.security")]
    assert (record.levelname, record.exc_info) == ("WARNING", None)
    assert record.getMessage() == "Filtering by content__startswith not allowed"
