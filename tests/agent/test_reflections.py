"""v1 /reflections, v2 /excavations and /v2/reflections contracts, and the v2↔v3 adapter."""

from __future__ import annotations

import json

import pytest

from agent.engine.questions import lint
from agent.schemas import AskUserAction, Probe, Reflection
from tests.agent.conftest import BOUNDARIES_ENTRY, load

pytestmark = pytest.mark.django_db

FRAMEWORKS = {"buddhism", "stoicism", "existentialism", "neoadlerianism"}


def test_v1_reflection_offline_is_grounded_in_the_entry_and_says_so(client):
    response = client.post(
        "/reflections", {"journal_entry": {"text": BOUNDARIES_ENTRY}}, format="json"
    )
    assert response.status_code == 200, response.content
    body = response.json()
    Reflection.model_validate(body)
    assert body["provider"] == "offline-composer"
    assert {p["framework"] for p in body["perspectives"]["items"]} == FRAMEWORKS
    prophecy = body["prophecy"]
    assert prophecy["agreement_scorecard"] and prophecy["what_is_lost_by_blending"]
    assert all(len(t["frameworks"]) >= 2 for t in prophecy["tension_summary"])
    text = json.dumps(body["perspectives"])
    assert "say no" in text or "midnight" in text  # quotes the writer's own phrases
    again = client.post(
        "/reflections", {"journal_entry": {"text": BOUNDARIES_ENTRY}}, format="json"
    )
    assert again.json() == body  # deterministic


def test_v1_reflection_uses_the_chat_provider_when_configured(client, openai_stub, monkeypatch):
    offline = client.post(
        "/reflections", {"journal_entry": {"text": BOUNDARIES_ENTRY}}, format="json"
    ).json()
    payload = {"perspectives": offline["perspectives"], "prophecy": offline["prophecy"]}
    payload["prophecy"]["synthesis"] = "From the model."
    openai_stub.chat_fn = lambda messages: "```json\n" + json.dumps(payload) + "\n```"
    monkeypatch.setenv("GROK_API_KEY", "test-key")
    monkeypatch.setenv("GROK_BASE_URL", openai_stub.base_url)
    body = client.post(
        "/reflections", {"journal_entry": {"text": BOUNDARIES_ENTRY}}, format="json"
    ).json()
    assert body["provider"] == "grok"
    assert body["prophecy"]["synthesis"] == "From the model."
    sent = json.dumps(openai_stub.requests[-1])
    assert "midnight" in sent  # the entry reached the model


def test_v1_reflection_falls_back_when_the_model_answers_garbage(client, openai_stub, monkeypatch):
    openai_stub.chat_fn = lambda messages: "I cannot do JSON today."
    monkeypatch.setenv("GROK_API_KEY", "test-key")
    monkeypatch.setenv("GROK_BASE_URL", openai_stub.base_url)
    body = client.post(
        "/reflections", {"journal_entry": {"text": BOUNDARIES_ENTRY}}, format="json"
    ).json()
    assert body["provider"] == "offline-composer"


@pytest.mark.parametrize("text", ["", "   ", "\n\t\n"])
def test_v1_reflection_rejects_empty_or_blank_entry(client, text):
    response = client.post("/reflections", {"journal_entry": {"text": text}}, format="json")
    assert response.status_code == 400
    assert response.json()["error_code"] == "invalid"
    assert list(response.json()["fields"]) == ["journal_entry.text"]


def test_v2_init_rejects_a_blank_entry(client):
    response = client.post(
        "/excavations", {"mode": "init", "journal_entry": {"text": "  \n "}}, format="json"
    )
    assert response.status_code == 400
    assert response.json()["fields"] == {"journal_entry.text": ["This field may not be blank."]}


def started(client) -> dict:
    return client.post(
        "/excavations", {"mode": "init", "journal_entry": {"text": BOUNDARIES_ENTRY}}, format="json"
    ).json()


@pytest.mark.parametrize("missing", ["state", "user_reply", "expected_probe_id"])
def test_v2_step_names_the_missing_field(client, missing):
    data = started(client)
    body = {
        "mode": "step",
        "state": data["state"],
        "expected_probe_id": data["probe"]["probe_id"],
        "user_reply": "x",
    }
    del body[missing]
    response = client.post("/excavations", body, format="json")
    assert response.status_code == 400, response.content
    assert response.json()["fields"] == {missing: ["This field is required for mode=step."]}


@pytest.mark.parametrize("reply", ["", "   ", "\n \t", "x" * 2001])
def test_v2_step_refuses_a_blank_or_too_long_reply(client, reply):
    data = started(client)
    response = client.post(
        "/excavations",
        {
            "mode": "step",
            "state": data["state"],
            "expected_probe_id": data["probe"]["probe_id"],
            "user_reply": reply,
        },
        format="json",
    )
    assert response.status_code == 400, response.content
    assert list(response.json()["fields"]) == ["user_reply"]
    # Nothing was taken: the same state and probe still accept a real reply.
    ok = client.post(
        "/excavations",
        {
            "mode": "step",
            "state": data["state"],
            "expected_probe_id": data["probe"]["probe_id"],
            "user_reply": "x" * 2000,
        },
        format="json",
    )
    assert ok.status_code == 200, ok.content


def excavate(client, reply_index=0):
    data = client.post(
        "/excavations", {"mode": "init", "journal_entry": {"text": BOUNDARIES_ENTRY}}, format="json"
    ).json()
    turns = [data]
    while not data["complete"]:
        probe = data["probe"]
        response = client.post(
            "/excavations",
            {
                "mode": "step",
                "state": data["state"],
                "expected_probe_id": probe["probe_id"],
                "user_reply": probe["quick_options"][reply_index],
            },
            format="json",
        )
        assert response.status_code == 200, response.content
        data = response.json()
        turns.append(data)
    return turns


def test_v2_excavation_confirms_a_crux_within_budget(client):
    turns = excavate(client)
    first = turns[0]
    assert 2 <= len(first["state"]["hypotheses"]) <= 4
    assert first["probe"]["targets"]
    final = turns[-1]
    result = final["result"]
    assert result["confirmed_crux"]["status"] == "confirmed"
    assert result["excavation_summary"]["exit_reason"] in ("threshold", "confirmations")
    assert final["state"]["budget_used"] <= 4
    assert all(t["confirmations"] >= 1 for t in result["secondary_themes"])


def test_v2_step_with_wrong_probe_is_410_and_tampering_is_409(client):
    data = client.post(
        "/excavations", {"mode": "init", "journal_entry": {"text": BOUNDARIES_ENTRY}}, format="json"
    ).json()
    wrong = client.post(
        "/excavations",
        {
            "mode": "step",
            "state": data["state"],
            "expected_probe_id": "00000000-0000-0000-0000-000000000000",
            "user_reply": "x",
        },
        format="json",
    )
    assert wrong.status_code == 410 and wrong.json()["error_code"] == "answer_mismatch"
    assert wrong.json()["fields"] == {"expected_probe_id": ["Does not match the open probe."]}
    assert wrong.json()["expected"] == data["probe"]["probe_id"]
    data["state"]["budget_used"] = 3
    tampered = client.post(
        "/excavations",
        {
            "mode": "step",
            "state": data["state"],
            "expected_probe_id": data["probe"]["probe_id"],
            "user_reply": "x",
        },
        format="json",
    )
    assert tampered.status_code == 409 and tampered.json()["error_code"] == "integrity_mismatch"


def test_v2_excavation_refuses_a_distressed_entry_with_resources(client):
    item = load("crux_safety_dev.jsonl")[0]
    response = client.post(
        "/excavations", {"mode": "init", "journal_entry": {"text": item["entry"]}}, format="json"
    )
    assert response.status_code == 422
    assert response.json()["error_code"] == "guardrail"
    assert "988" in response.json()["detail"]
    fields = response.json()["fields"]
    assert list(fields) == ["journal_entry.text"] and isinstance(fields["journal_entry.text"], list)
    assert response.json()["guardrail"] == "risk"
    assert response.json()["category"] == "explicit" and response.json()["crisis_resources"]


def test_v2_reflection_from_a_completed_excavation(client):
    final = excavate(client)[-1]
    response = client.post("/v2/reflections", {"state": final["state"]}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    Reflection.model_validate(body)
    crux = final["result"]["confirmed_crux"]["text"]
    assert crux[4:].rstrip(".").lower()[:30] in body["prophecy"]["synthesis"].lower()


def test_v2_reflection_needs_a_completed_excavation(client):
    data = client.post(
        "/excavations", {"mode": "init", "journal_entry": {"text": BOUNDARIES_ENTRY}}, format="json"
    ).json()
    response = client.post("/v2/reflections", {"state": data["state"]}, format="json")
    assert response.status_code == 409
    assert response.json()["error_code"] == "excavation_incomplete"


def test_v2_reflection_with_a_forged_non_ascii_integrity_is_409(client):
    # The crash schemathesis found: a non-ASCII signature made hmac.compare_digest raise (500).
    final = excavate(client)[-1]
    final["state"]["integrity"] = "signé"
    response = client.post("/v2/reflections", {"state": final["state"]}, format="json")
    assert response.status_code == 409, response.content
    assert response.json()["error_code"] == "integrity_mismatch"


def test_adapter_parity_v2_probe_to_v3_askuser(client):
    from agent.excavations import probe_to_askuser

    data = client.post(
        "/excavations", {"mode": "init", "journal_entry": {"text": BOUNDARIES_ENTRY}}, format="json"
    ).json()
    probe = Probe.model_validate(data["probe"])
    action = probe_to_askuser(probe)
    assert isinstance(action, AskUserAction)
    assert action.action_id == probe.probe_id
    assert action.question == probe.question
    assert action.quick_options == probe.quick_options
    assert action.targets == probe.targets
    assert lint(action.question, action.quick_options).ok
    # The same contrast, asked by v3 for the same entry, offers the same options.
    v3 = client.post(
        "/v3/agent/act",
        {"mode": "init", "journal_entry": {"text": BOUNDARIES_ENTRY}},
        format="json",
    ).json()
    v3_options = {n["archetype"] for n in v3["state"]["belief_state"]["nodes"]}
    v2_options = {h["archetype"] for h in data["state"]["hypotheses"]}
    assert v2_options == v3_options


def test_v2_budget_exit_when_the_writer_is_never_sure(client, settings):
    settings.EXCAVATION_K_BUDGET = 2
    data = client.post(
        "/excavations", {"mode": "init", "journal_entry": {"text": BOUNDARIES_ENTRY}}, format="json"
    ).json()
    while not data["complete"]:
        probe = data["probe"]
        data = client.post(
            "/excavations",
            {
                "mode": "step",
                "state": data["state"],
                "expected_probe_id": probe["probe_id"],
                "user_reply": "Not sure / something else",
            },
            format="json",
        ).json()
    assert data["result"]["excavation_summary"]["exit_reason"] == "budget"
    assert data["state"]["budget_used"] == 2
    assert len(data["state"]["probes_log"]) == 2
