"""Pages with the Redis cache unreachable: a page that needs the cache (sign-in counts failed
attempts there) answers a 503 sentence and one WARNING line naming the address, as the API
does, never a 500 with a traceback; the page works again once Redis is back."""

from __future__ import annotations

import logging

import pytest
from django.test import Client

from tests.support.redis_server import cache_down

pytestmark = pytest.mark.django_db

SENTENCE = "A service this request needs is unavailable; try again shortly."


@pytest.mark.parametrize("path", ["/accounts/login/", "/admin/login/"])
def test_signing_in_with_the_cache_down_is_a_503_sentence_and_one_log_line(
    user, caplog, path, settings
):
    settings.LOGIN_FAILURE_LIMIT = 5  # the guard on (it reads the cache)
    user.is_staff = True  # the admin's sign-in admits staff only
    user.save()
    caplog.set_level(logging.WARNING)
    browser = Client()
    with cache_down() as port:
        response = browser.post(path, {"username": "alice", "password": "pw-alice"})
    assert response.status_code == 503, response.content[:300]
    assert response["Content-Type"].startswith("text/plain")
    assert response.content.decode() == SENTENCE
    [record] = [r for r in caplog.records if r.name == "legacymind.errors"]
    assert record.getMessage().startswith(f"redis at 127.0.0.1:{port}/7 unreachable on {path}")
    assert "pw-alice" not in record.getMessage()
    assert not [r for r in caplog.records if r.exc_info], "a traceback was logged"
    again = browser.post(path, {"username": "alice", "password": "pw-alice"})
    assert again.status_code == 302  # signed in once the cache is back
