"""The database going away under a running server: the API answers a retryable 503 in the
envelope, the pages a one-line 503, each with one WARNING line, not a 500 with a traceback, and
nothing is half-stored."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from django.db import connections
from django.test import Client

from thoughts.models import Thought

pytestmark = pytest.mark.django_db(transaction=True)


@contextmanager
def database_unreachable() -> Iterator[None]:
    """The real server stays up; this process's connection points at a closed port, as after
    a failover to an address that does not answer yet."""
    conn = connections["default"]
    saved = dict(conn.settings_dict)
    conn.close()
    conn.settings_dict.update(HOST="127.0.0.1", PORT="1")
    try:
        yield
    finally:
        conn.close()
        conn.settings_dict.clear()
        conn.settings_dict.update(saved)


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("get", "/api/v1/thoughts/", None),
        ("post", "/api/v1/think", {"content": "The database is down."}),
        ("get", "/api/v1/kg/entities/", None),
    ],
)
def test_an_unreachable_database_is_a_503_envelope_and_one_log_line(
    api, caplog, method, path, body
):
    before = Thought.objects.count()
    caplog.set_level(logging.WARNING, logger="legacymind.errors")
    with database_unreachable():
        response = getattr(api, method)(path, body, format="json")
    assert response.status_code == 503, response.content
    assert response.json() == {
        "error_code": "service_unavailable",
        "detail": "The database is unavailable; try again shortly.",
        "fields": {},
    }
    [record] = [r for r in caplog.records if r.name == "legacymind.errors"]
    assert record.getMessage().startswith(f"database error on {path}: connection failed")
    assert "\n" not in record.getMessage() and record.exc_info is None
    assert Thought.objects.count() == before  # connected again: nothing was stored


def test_the_api_works_again_once_the_database_is_back(api):
    with database_unreachable():
        assert api.get("/api/v1/thoughts/").status_code == 503
    assert api.get("/api/v1/thoughts/").status_code == 200


@pytest.mark.parametrize("path", ["/inner-voice/", "/journal/"])
def test_a_page_whose_database_is_gone_is_a_503_sentence_and_one_log_line(user, caplog, path):
    browser = Client()
    browser.force_login(user)
    caplog.set_level(logging.WARNING, logger="legacymind.errors")
    with database_unreachable():
        response = browser.get(path)
    assert response.status_code == 503
    assert response["Content-Type"].startswith("text/plain")
    assert response.content.decode() == "The database is unavailable; try again shortly."
    [record] = [r for r in caplog.records if r.name == "legacymind.errors"]
    assert record.getMessage().startswith(f"database error on {path}: connection failed")
    assert record.exc_info is None
    assert browser.get(path).status_code == 200  # and the page is back with the database
