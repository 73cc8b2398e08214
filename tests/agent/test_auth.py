"""The journaling agent needs a login, like every API but health and schema: the API answers
401 without one, the pages send the browser to the sign-in page, and the guards count turns
per user."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from prometheus_client import REGISTRY
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from .conftest import act, one_rate_window

ENTRY = {"text": "I keep saying yes to every request at work and I am exhausted by evening."}
API_POSTS = [
    ("/v3/agent/act", {"mode": "init", "journal_entry": ENTRY}),
    ("/reflections", {"journal_entry": ENTRY}),
    ("/excavations", {"mode": "init", "journal_entry": ENTRY}),
    ("/v2/reflections", {"state": {}}),
]


def _turns() -> float:
    """Turns served so far, over every mode label."""
    return sum(
        sample.value
        for metric in REGISTRY.collect()
        for sample in metric.samples
        if sample.name == "agent_turns_total"
    )


@pytest.mark.parametrize(("path", "body"), API_POSTS, ids=[p for p, _ in API_POSTS])
def test_agent_api_without_credentials_is_401_and_runs_nothing(agent_cache, path, body):
    before = _turns()
    response = APIClient().post(path, body, format="json")
    assert response.status_code == 401
    assert response.json()["error_code"] == "not_authenticated"
    assert _turns() == before


@pytest.mark.parametrize(("path", "body"), API_POSTS[:3], ids=[p for p, _ in API_POSTS[:3]])
def test_agent_api_with_a_token_answers(agent_cache, user, path, body):
    from rest_framework.authtoken.models import Token

    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION="Token " + Token.objects.create(user=user).key)
    before = _turns()
    assert api.post(path, body, format="json").status_code == 200
    if path == "/v3/agent/act":  # the counter the 401 test watches does move on a served turn
        assert _turns() == before + 1


def test_metrics_are_for_staff_signed_in_or_with_a_token(agent_cache, user, other_user):
    anonymous = APIClient().get("/metrics")
    assert anonymous.status_code == 401
    assert anonymous.json()["error_code"] == "not_authenticated"
    assert b"agent_turns" not in anonymous.content
    wrong = APIClient()
    wrong.credentials(HTTP_AUTHORIZATION="Token not-a-key")
    assert wrong.get("/metrics").status_code == 401
    writer = APIClient()
    writer.credentials(HTTP_AUTHORIZATION="Token " + Token.objects.create(user=user).key)
    forbidden = writer.get("/metrics")
    assert forbidden.status_code == 403 and forbidden.json()["error_code"] == "permission_denied"
    other_user.is_staff = True
    other_user.save()
    scraper = APIClient()  # how Prometheus sends it: authorization type Token
    scraper.credentials(HTTP_AUTHORIZATION="Token " + Token.objects.create(user=other_user).key)
    response = scraper.get("/metrics")
    assert response.status_code == 200
    assert b"agent_turns_total" in response.content
    session = APIClient()
    session.force_login(other_user)
    assert session.get("/metrics").status_code == 200


def test_journal_pages_send_an_anonymous_browser_to_sign_in(agent_cache):
    anonymous = APIClient()
    page = anonymous.get("/journal/")
    assert page.status_code == 302
    assert page["Location"] == "/accounts/login/?next=/journal/"
    before = _turns()
    posted = anonymous.post("/journal/act", {"entry": ENTRY["text"]})
    assert posted.status_code == 302
    assert posted["Location"].startswith("/accounts/login/")
    assert _turns() == before


def test_sign_in_leads_to_the_journal_and_a_wrong_password_does_not(agent_cache, db):
    User.objects.create_user("writer", password="correct horse battery")
    browser = APIClient()
    wrong = browser.post(
        "/accounts/login/?next=/journal/",
        {"username": "writer", "password": "wrong", "next": "/journal/"},
    )
    assert wrong.status_code == 200
    assert b"Please enter a correct username and password" in wrong.content
    assert browser.get("/journal/").status_code == 302

    right = browser.post(
        "/accounts/login/?next=/journal/",
        {"username": "writer", "password": "correct horse battery", "next": "/journal/"},
    )
    assert right.status_code == 302 and right["Location"] == "/journal/"
    journal = browser.get("/journal/")
    assert journal.status_code == 200
    assert b'id="signed-in">writer<' in journal.content

    browser.post("/accounts/logout/")
    assert browser.get("/journal/").status_code == 302


def test_the_rate_guard_counts_each_user_on_their_own(agent_cache, user, other_user, settings):
    first, second = APIClient(), APIClient()
    first.force_authenticate(user)
    second.force_authenticate(other_user)
    one_rate_window(settings, second, per_minute=1)  # a turn with the guard off counts nothing
    body = {"mode": "init", "journal_entry": ENTRY}
    assert act(first, body).status_code == 200
    assert act(first, body).status_code == 429
    assert act(second, body).status_code == 200
