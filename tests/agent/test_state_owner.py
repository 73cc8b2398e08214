"""A signed state belongs to the user it was signed for: another signed-in user who gets hold of
it is refused exactly as a tampered state is, and the owner can still continue it afterwards
(the refused attempt takes nothing). The same user may use the API by session or by token, and
the journal page: all three are one client."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from tests.agent.conftest import BOUNDARIES_ENTRY, MIXED_ENTRY, advance, init
from tests.agent.test_pages import _state
from tests.agent.test_reflections import excavate

pytestmark = pytest.mark.django_db


@pytest.fixture
def intruder(agent_cache: None, other_user: User) -> APIClient:
    """Another signed-in writer, by session as the browser is."""
    browser = APIClient()
    browser.force_login(other_user)
    return browser


def test_another_user_continuing_a_state_is_refused_as_tampering(client, intruder):
    data = init(client, MIXED_ENTRY)  # its first action is an internal step: no answer needed
    tampered = json.loads(json.dumps(data))
    tampered["state"]["budget_used"] += 1
    refused_as_tampered = advance(client, tampered)
    assert refused_as_tampered.status_code == 409

    theirs = advance(intruder, data)

    assert theirs.status_code == refused_as_tampered.status_code
    assert theirs.json() == refused_as_tampered.json()
    assert theirs.json()["error_code"] == "integrity_mismatch"
    # Nothing of the owner's was taken: the same revision still continues, once.
    assert advance(client, data).status_code == 200
    assert advance(client, data).json()["error_code"] == "stale_revision"


def test_another_user_cannot_replay_the_owners_idempotent_answer(client, intruder):
    data = init(client, MIXED_ENTRY)
    first = advance(client, data, HTTP_IDEMPOTENCY_KEY="k")
    assert first.status_code == 200
    theirs = advance(intruder, data, HTTP_IDEMPOTENCY_KEY="k")
    assert theirs.status_code == 409 and theirs.json()["error_code"] == "integrity_mismatch"
    assert first.content not in theirs.content


def test_the_owner_may_switch_between_session_and_token(client, api, settings):
    settings.AGENT_EVIDENCE_REQUESTS = "always"  # an internal step first, then a question
    data = init(client, MIXED_ENTRY)
    response = advance(api, data)
    assert response.status_code == 200, response.content
    assert advance(client, response.json()).status_code == 200


def test_a_state_signed_before_owners_existed_no_longer_verifies(client, settings):
    """The old signature (the secret alone, for anyone) is refused: states in flight when this
    shipped restart once, rather than staying transferable."""
    import hashlib
    import hmac

    from agent.integrity import canonical
    from agent.schemas import AgentState

    data = init(client, MIXED_ENTRY)
    state = AgentState.model_validate(data["state"])
    key = settings.AGENT_STATE_SECRET.encode()
    data["state"]["integrity"] = hmac.new(key, canonical(state), hashlib.sha256).hexdigest()
    response = advance(client, data)
    assert response.status_code == 409 and response.json()["error_code"] == "integrity_mismatch"


def test_journal_page_refuses_another_users_state_and_the_owner_goes_on(client, intruder):
    page = client.post("/journal/act", {"entry": BOUNDARIES_ENTRY}).content.decode()
    state = _state(page)
    action = state["last_action"]
    answer = {
        "state": json.dumps(state),
        "answer_to": action["action_id"],
        "value": action["quick_options"][0],
    }
    theirs = intruder.post("/journal/act", answer)
    assert theirs.status_code == 409
    assert "could not be checked" in theirs.content.decode()
    assert client.post("/journal/act", answer).status_code == 200


def test_a_page_state_continues_through_the_api_for_the_same_user(client, api):
    page = client.post("/journal/act", {"entry": BOUNDARIES_ENTRY}).content.decode()
    state = _state(page)
    response = advance(api, {"state": state, "action": state["last_action"]})
    assert response.status_code == 200, response.content


def _step(who: APIClient, data: dict) -> object:
    body = {
        "mode": "step",
        "state": data["state"],
        "expected_probe_id": data["probe"]["probe_id"],
        "user_reply": data["probe"]["quick_options"][0],
    }
    return who.post("/excavations", body, format="json")


def test_another_user_stepping_an_excavation_is_refused_as_tampering(client, intruder):
    start = {"mode": "init", "journal_entry": {"text": BOUNDARIES_ENTRY}}
    data = client.post("/excavations", start, format="json").json()
    tampered = json.loads(json.dumps(data))
    tampered["state"]["budget_used"] = 3
    refused_as_tampered = _step(client, tampered)

    theirs = _step(intruder, data)

    assert theirs.status_code == refused_as_tampered.status_code == 409
    assert theirs.json() == refused_as_tampered.json()
    assert theirs.json()["error_code"] == "integrity_mismatch"
    assert _step(client, data).status_code == 200


def test_another_user_cannot_reflect_on_an_excavation(client, intruder):
    final = excavate(client)[-1]
    theirs = intruder.post("/v2/reflections", {"state": final["state"]}, format="json")
    assert theirs.status_code == 409 and theirs.json()["error_code"] == "integrity_mismatch"
    mine = client.post("/v2/reflections", {"state": final["state"]}, format="json")
    assert mine.status_code == 200, mine.content
