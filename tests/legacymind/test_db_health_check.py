"""The connection health check (legacymind/postgres/base.py) sends nothing to a connection at
rest, still finds one the server has ended, and falls back to Django's ``SELECT 1`` whenever
the socket has something to read or a transaction is open. Real connections to the test
database; what each one sends is read from libpq's protocol trace."""

from __future__ import annotations

import json
import select
import time
from urllib import request as urlrequest

import pytest
from django.db import connection, transaction
from rest_framework.authtoken.models import Token

from tests.legacymind.test_gunicorn import _hash_stub, served
from tests.support.pg_trace import another_connection, sent_sql

pytestmark = pytest.mark.django_db(transaction=True)


def rested() -> None:
    """The default connection open, used once, and at rest between transactions."""
    connection.ensure_connection()
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    assert not connection.in_atomic_block


def test_a_connection_at_rest_is_usable_without_a_round_trip(tmp_path):
    rested()
    with sent_sql(tmp_path / "trace") as queries:
        assert connection.is_usable()
    assert queries == []


def test_a_connection_the_server_ended_is_not_usable():
    rested()
    pid = connection.connection.info.backend_pid
    with another_connection() as other:
        assert other.execute("SELECT pg_terminate_backend(%s)", [pid]).fetchone() == (True,)
    deadline = time.monotonic() + 10
    while connection.is_usable() and time.monotonic() < deadline:
        time.sleep(0.05)  # the server's goodbye reaches the socket a moment later
    assert not connection.is_usable()
    connection.close()
    with connection.cursor() as cursor:  # Django opens a new one
        cursor.execute("SELECT 1")
        assert cursor.fetchone() == (1,)


def test_something_to_read_falls_back_to_select_1_and_the_connection_stays(tmp_path):
    rested()
    with connection.cursor() as cursor:
        cursor.execute("LISTEN legacymind_health_test")
    with another_connection() as other:
        other.execute("NOTIFY legacymind_health_test")
    poller = select.poll()
    poller.register(connection.connection.fileno(), select.POLLIN)
    assert poller.poll(10_000), "the notification never reached the socket"
    with sent_sql(tmp_path / "trace") as queries:
        assert connection.is_usable()  # a notification is no reason to drop it
    assert queries == ["SELECT 1"]
    with connection.cursor() as cursor:
        cursor.execute("UNLISTEN *")


def test_inside_a_transaction_the_check_asks_the_server(tmp_path):
    rested()
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        with sent_sql(tmp_path / "trace") as queries:
            assert connection.is_usable()
    assert queries == ["SELECT 1"]


def test_gunicorn_replaces_a_connection_the_server_ended_and_the_request_succeeds(user):
    """Served for real (persistent connections, health checks on): a request after the
    server ended the worker's connection is answered, not a 503."""
    token = Token.objects.create(user=user).key

    def thoughts(url: str) -> int:
        req = urlrequest.Request(
            f"{url}/api/v1/thoughts/", headers={"Authorization": f"Token {token}"}
        )
        with urlrequest.urlopen(req, timeout=30) as r:
            json.loads(r.read())
            return int(r.status)

    mine = connection.connection.info.backend_pid if connection.connection else None
    with _hash_stub() as stub, served(stub, WEB_CONCURRENCY="1", WEB_THREADS="1") as url:
        assert thoughts(url) == 200
        with another_connection() as other:
            ended = other.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid() "
                "AND pid IS DISTINCT FROM %s AND backend_type = 'client backend'",
                [mine],
            ).fetchone()
        assert ended is not None and ended[0] >= 1
        time.sleep(0.2)
        assert thoughts(url) == 200
