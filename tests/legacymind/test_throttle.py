"""API_THROTTLE_USER / API_THROTTLE_ANON: optional rates, a 429 envelope with Retry-After."""

from __future__ import annotations

import pytest

from tests.conftest import client_for
from tests.support.settings_process import settings_process

pytestmark = pytest.mark.django_db
URL = "/api/v1/thoughts/"


def test_a_user_over_the_rate_gets_429_and_others_do_not(api, other_user, settings):
    settings.API_THROTTLE_USER = "3/minute"
    assert [api.get(URL).status_code for _ in range(3)] == [200, 200, 200]
    response = api.get(URL)
    assert response.status_code == 429
    body = response.json()
    assert body["error_code"] == "throttled" and set(body) == {"error_code", "detail", "fields"}
    assert 0 < int(response["Retry-After"]) <= 60
    # The rate is per user: someone else is not held back.
    assert client_for(other_user).get(URL).status_code == 200


def test_anonymous_clients_have_their_own_rate(anon_api, settings):
    # The schema is the one DRF view open to anonymous clients; elsewhere they get a 401 first.
    settings.API_THROTTLE_ANON = "2/minute"
    statuses = [anon_api.get("/api/schema/").status_code for _ in range(3)]
    assert statuses == [200, 200, 429]


def test_an_anonymous_client_cannot_reset_its_rate_with_a_forwarded_for_header(anon_api, settings):
    # Without TRUSTED_PROXY_COUNT the header is the client's own claim: it is ignored.
    settings.API_THROTTLE_ANON = "2/minute"
    statuses = [
        anon_api.get("/api/schema/", HTTP_X_FORWARDED_FOR=f"198.51.100.{i}").status_code
        for i in range(3)
    ]
    assert statuses == [200, 200, 429]


def test_without_a_rate_nothing_is_throttled(api, settings):
    settings.API_THROTTLE_USER = ""
    settings.API_THROTTLE_ANON = ""
    # Far past any rate a deployment would set per minute for one user.
    assert {api.get(URL).status_code for _ in range(120)} == {200}


@pytest.mark.parametrize("bad", ["lots", "0/minute", "10/fortnight", "-5/hour"])
def test_a_malformed_rate_fails_at_start_up_naming_the_variable(bad):
    result = settings_process("import django; django.setup()", API_THROTTLE_USER=bad)
    assert result.returncode != 0
    assert "API_THROTTLE_USER" in result.stderr and "100/minute" in result.stderr


def test_a_rate_is_normalised_at_start_up():
    code = "import django; django.setup(); from django.conf import settings; print(settings.API_THROTTLE_ANON)"
    result = settings_process(code, API_THROTTLE_ANON="30/Hour")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "30/hour"
