"""The error pages a browser gets (404, 403, the CSRF 403, 500) are the site's own: its
layout, stylesheet and navigation, a plain-words heading and a way back; the API keeps its
JSON envelope (tests/legacymind/test_health_and_errors.py)."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from tests.thoughts.factories import ThoughtFactory, UserFactory

pytestmark = pytest.mark.django_db

STYLESHEET = "vendor/pico/pico.min.css"


def in_the_sites_design(page: str, heading: str) -> None:
    assert STYLESHEET in page and 'id="error-page"' in page
    assert f"<h1>{heading}</h1>" in page
    assert 'id="error-home"' in page


def test_a_missing_page_and_someone_elses_thought_are_the_sites_404() -> None:
    me: Any = UserFactory()
    them: Any = UserFactory()
    theirs: Any = ThoughtFactory(owner=them, content="their words")
    client = Client()
    client.force_login(me)
    for url in ("/no-such-page/", f"/thoughts/{theirs.pk}/"):
        response = client.get(url)
        assert response.status_code == 404
        page = response.content.decode()
        in_the_sites_design(page, "This page is not here")
        assert "<title>Not found · LegacyMind</title>" in page
        assert 'id="signed-in"' in page  # the navigation of the signed-in user
        assert "their words" not in page


def test_a_page_that_needs_a_permission_is_the_sites_403() -> None:
    client = Client()
    user: Any = UserFactory()
    client.force_login(user)
    response = client.get("/kg/review/")  # moderators only
    assert response.status_code == 403
    in_the_sites_design(response.content.decode(), "You cannot open this page")


def test_a_form_without_its_csrf_token_is_the_sites_403() -> None:
    response = Client(enforce_csrf_checks=True).post(
        "/accounts/login/", {"username": "a", "password": "b"}
    )
    assert response.status_code == 403
    in_the_sites_design(response.content.decode(), "That form could not be sent")


@pytest.mark.urls("tests.support.crash_urls")
def test_a_crash_on_a_page_is_the_sites_500_without_its_details(settings: Any) -> None:
    settings.DEBUG = False
    response = Client(raise_request_exception=False).get("/pages/crash")
    assert response.status_code == 500
    page = response.content.decode()
    in_the_sites_design(page, "Something went wrong on our side")
    assert "secret-detail" not in page
