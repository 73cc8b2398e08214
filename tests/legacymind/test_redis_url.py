"""REDIS_URL is checked at start-up: a URL redis-py would read differently from what it says
(no host: localhost; a bad port: a ValueError at the first connection) stops the process with
one line naming the variable, and never echoes the URL (it may hold a password)."""

from __future__ import annotations

import pytest

from tests.support.settings_process import manage_process, settings_process

LOADS = "import django; django.setup(); print('ok')"


@pytest.mark.parametrize(
    "url",
    [
        "redis://",  # no host: was silently localhost:6379/0
        "redis://:hunter2@/0",
        "redis://127.0.0.1:notaport/9",  # was accepted; /healthz then said "error: ValueError"
        "redis://127.0.0.1:0/9",
        "redis://127.0.0.1:65536/9",
        "redis://127.0.0.1:/9",
        "redis://127.0.0.1:6379/nine",
        "redis://127.0.0.1:6379?db=x",
        "unix://",
        "unix:///run/redis.sock?db=x",
        "http://127.0.0.1:6379",
    ],
)
def test_a_malformed_redis_url_stops_start_up_naming_it(url):
    proc = settings_process(LOADS, REDIS_URL=url)
    assert proc.returncode != 0
    last_line = proc.stderr.strip().splitlines()[-1]
    assert "ImproperlyConfigured" in last_line and "REDIS_URL" in last_line, last_line
    assert "hunter2" not in proc.stderr


@pytest.mark.parametrize(
    "url",
    [
        "redis://127.0.0.1:6379/9",
        "redis://redis",
        "rediss://:secret@cache.example.org:6380/0",
        "redis://[::1]:6379/0",
        "redis://127.0.0.1?db=3",
        "unix:///run/redis.sock?db=2",
    ],
)
def test_well_formed_redis_urls_load(url):
    proc = settings_process(LOADS, REDIS_URL=url)
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_manage_py_says_it_in_one_line():
    proc = manage_process("check", REDIS_URL="redis://127.0.0.1:notaport/9")
    assert proc.returncode != 0
    assert proc.stderr.strip().splitlines() == [
        "Configuration error: REDIS_URL has a bad port: a whole number from 1 to 65535"
    ]
