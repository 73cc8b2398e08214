"""An answer in the writer's own words becomes a hypothesis, offered back as an option in those
words (not cut to four of them behind a prefix); typing the sentence again picks that option."""

from __future__ import annotations

from typing import Any

import pytest

from tests.agent.conftest import act, init, run_to_question

pytestmark = pytest.mark.django_db

ENTRY = "I snapped at my partner again over the dishes. I am exhausted from work."
ANSWER = "Mostly I feel nobody sees how much I do"


def answer(client: Any, data: dict[str, Any], value: str) -> dict[str, Any]:
    event = {"answer_to": data["action"]["action_id"], "value": value}
    response = act(client, {"mode": "continue", "state": data["state"], "user_event": event})
    assert response.status_code == 200, response.content
    return response.json()


def offered_back(client: Any) -> dict[str, Any] | None:
    """A session answered in ANSWER until the loop offers those words back (None if it ends
    first: the loop's turns depend on the session's random id)."""
    data = run_to_question(client, init(client, ENTRY))
    for _ in range(8):
        if data["complete"]:
            return None
        if ANSWER in data["action"]["quick_options"]:
            return data
        data = run_to_question(client, answer(client, data, ANSWER))
    return None


def test_the_writers_words_come_back_as_an_option_that_typing_them_again_picks(client, settings):
    settings.AGENT_RATE_PER_MINUTE = 0  # many sessions in a minute
    # Sessions differ by their random id; about half offer the words back within a few turns.
    offered = next(filter(None, (offered_back(client) for _ in range(20))), None)
    assert offered is not None, "the writer's words were never offered as an option"
    options = offered["action"]["quick_options"]
    assert not any(o.startswith("In the writer's words") for o in options), options
    after = answer(client, offered, ANSWER)
    [evidence] = [
        e for e in after["state"]["evidence_log"]
        if e["kind"] == "UserAnswer" and e["payload"]["action_id"] == offered["action"]["action_id"]
    ]  # fmt: skip
    assert evidence["payload"]["free_text"] is False
    assert evidence["payload"]["option_index"] == options.index(ANSWER)
