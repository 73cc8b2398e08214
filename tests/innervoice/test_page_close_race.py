"""Two "Close this thread" clicks at once: the second finds the thread closed while closing it
and answers like the first (a redirect to the closed thread), not a 500. Outside a test
transaction: the race is between two real database sessions."""

from __future__ import annotations

import threading

import psycopg
import pytest
from django.db import connection
from django.test import Client

from innervoice.models import DialogueThread
from tests.innervoice.factories import DialogueThreadFactory

pytestmark = pytest.mark.django_db(transaction=True)


def test_closing_a_thread_another_click_is_closing_redirects_to_it(user):
    thread = DialogueThreadFactory(owner=user)
    browser = Client()
    browser.force_login(user)
    params = connection.get_connection_params()
    params.pop("cursor_factory", None)
    params.pop("context", None)
    # The other click: holds the thread's row while the page reads the thread as open, then
    # closes it and commits once the page is waiting for the row lock.
    other = psycopg.connect(**params)
    other.execute("SELECT 1 FROM innervoice_dialoguethread WHERE id = %s FOR UPDATE", [thread.id])
    answer: dict[str, int | str] = {}

    def click() -> None:
        response = browser.post(f"/inner-voice/threads/{thread.id}/close")
        answer["status"], answer["location"] = response.status_code, response.get("Location", "")

    page = threading.Thread(target=click)
    page.start()
    try:
        waiting = (
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE wait_event_type = 'Lock' AND datname = current_database()"
        )
        for _ in range(200):  # until the page's SELECT ... FOR UPDATE waits on the other click
            if other.execute(waiting).fetchone()[0]:  # type: ignore[index]
                break
            threading.Event().wait(0.05)
        other.execute(
            "UPDATE innervoice_dialoguethread SET status = 'closed', closed_at = now(), "
            "close_reason = 'closed' WHERE id = %s",
            [thread.id],
        )
        other.commit()
        page.join(30)
    finally:
        other.close()
    assert answer == {"status": 302, "location": f"/inner-voice/threads/{thread.id}/"}
    assert DialogueThread.objects.get(id=thread.id).status == DialogueThread.Status.CLOSED
