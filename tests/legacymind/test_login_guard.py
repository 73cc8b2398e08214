"""The sign-in guard: failed sign-ins for one username from one address lock that pair for a
window, on the browser sign-in page and the admin's login alike."""

from __future__ import annotations

import time

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.test import Client

from tests.support.settings_process import settings_process

pytestmark = pytest.mark.django_db

PASSWORD = "correct horse battery"
WRONG = b"Please enter a correct username and password"
LOCKED = b"Too many failed sign-ins"


@pytest.fixture(autouse=True)
def _guard(settings):
    settings.LOGIN_FAILURE_LIMIT = 3
    settings.LOGIN_FAILURE_WINDOW = 900
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def writer() -> User:
    return User.objects.create_user("writer", password=PASSWORD, is_staff=True)


def sign_in(browser: Client, password: str, path: str = "/accounts/login/") -> bytes:
    response = browser.post(path, {"username": "writer", "password": password, "next": "/journal/"})
    if response.status_code == 302:
        return b"signed in"
    assert response.status_code == 200
    return response.content


def test_failures_below_the_limit_leave_the_right_password_working(writer):
    browser = Client()
    for _ in range(2):
        assert WRONG in sign_in(browser, "nope")
    assert sign_in(browser, PASSWORD) == b"signed in"
    assert browser.get("/journal/").status_code == 200


def test_at_the_limit_even_the_right_password_is_refused_and_says_why(writer):
    browser = Client()
    assert WRONG in sign_in(browser, "nope")
    assert WRONG in sign_in(browser, "nope")
    assert LOCKED in sign_in(browser, "nope")  # the third failure locks the pair
    assert LOCKED in sign_in(browser, PASSWORD)
    assert browser.get("/journal/").status_code == 302  # not signed in


def test_the_admin_login_is_guarded_too(writer):
    for _ in range(3):
        sign_in(Client(), "nope")
    page = sign_in(Client(), PASSWORD, path="/admin/login/")
    assert LOCKED in page


def test_the_same_username_from_another_address_still_signs_in(writer):
    for _ in range(3):
        sign_in(Client(), "nope")
    elsewhere = Client(REMOTE_ADDR="203.0.113.7")
    assert sign_in(elsewhere, PASSWORD) == b"signed in"


def test_usernames_are_counted_case_insensitively(writer):
    browser = Client()
    for name in ("writer", "Writer", "WRITER"):
        browser.post("/accounts/login/", {"username": name, "password": "nope"})
    assert LOCKED in sign_in(browser, PASSWORD)


def test_the_lock_ends_with_its_window(writer, settings):
    # Long enough for three password checks (a few hundred ms each) to fall inside it.
    settings.LOGIN_FAILURE_WINDOW = 3
    browser = Client()
    sign_in(browser, "nope")
    started = time.monotonic()  # the window opened during that request: ends before started + 3
    for _ in range(2):
        sign_in(browser, "nope")
    assert LOCKED in sign_in(browser, PASSWORD)
    assert time.monotonic() - started < 2, "the machine was too slow to test inside the window"
    time.sleep(3.2 - (time.monotonic() - started))
    assert sign_in(browser, PASSWORD) == b"signed in"


def test_limit_zero_turns_the_guard_off(writer, settings):
    settings.LOGIN_FAILURE_LIMIT = 0
    browser = Client()
    for _ in range(5):
        assert WRONG in sign_in(browser, "nope")
    assert sign_in(browser, PASSWORD) == b"signed in"


@pytest.mark.parametrize(
    ("name", "bad"), [("LOGIN_FAILURE_LIMIT", "many"), ("LOGIN_FAILURE_WINDOW", "0")]
)
def test_a_bad_setting_fails_at_start_up_naming_the_variable(name, bad):
    result = settings_process("import django; django.setup()", **{name: bad})
    assert result.returncode != 0
    assert name in result.stderr


def _lock_out(browser: Client) -> None:
    assert WRONG in sign_in(browser, "nope")
    assert WRONG in sign_in(browser, "nope")
    assert LOCKED in sign_in(browser, "nope")  # the third failure locks the pair


def test_without_a_trusted_proxy_a_forwarded_for_header_does_not_dodge_the_lock(writer):
    _lock_out(Client(HTTP_X_FORWARDED_FOR="198.51.100.1"))
    # Same address, another claimed client: still the same pair.
    assert LOCKED in sign_in(Client(HTTP_X_FORWARDED_FOR="198.51.100.2"), PASSWORD)


def test_behind_a_trusted_proxy_each_forwarded_client_is_counted_apart(writer, settings):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}
    _lock_out(Client(HTTP_X_FORWARDED_FOR="198.51.100.1"))

    # Another client behind the same proxy signs in.
    assert sign_in(Client(HTTP_X_FORWARDED_FOR="198.51.100.2"), PASSWORD) == b"signed in"
    # The locked client cannot escape by prepending an address: the proxy appends the real one.
    spoof = Client(HTTP_X_FORWARDED_FOR="198.51.100.3, 198.51.100.1")
    assert LOCKED in sign_in(spoof, PASSWORD)


def test_trusted_proxy_count_comes_from_the_environment():
    result = settings_process(
        "import django; django.setup(); from django.conf import settings; "
        "print(settings.REST_FRAMEWORK['NUM_PROXIES'])",
        TRUSTED_PROXY_COUNT="2",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["2"]


@pytest.mark.parametrize("bad", ["two", "-1"])
def test_a_bad_trusted_proxy_count_fails_at_start_up_naming_the_variable(bad):
    result = settings_process("import django; django.setup()", TRUSTED_PROXY_COUNT=bad)
    assert result.returncode != 0
    assert "TRUSTED_PROXY_COUNT" in result.stderr
