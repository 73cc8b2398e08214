"""The distress detector's two levels at every door that reads a writer's words: v3 turns and
free-text answers, v1 reflections, v2 excavations, the inner voice; its metrics; the chat-model
layer that may raise a level and never lower it; and the text never logged or stored."""

from __future__ import annotations

import json
import logging
import sys

import pytest
from django.apps import apps
from django.db import connection

from agent.safety import semantic
from tests.agent.conftest import BOUNDARIES_ENTRY, act, init
from tests.agent.test_distress import FAKE_CLI

# One indirect sign (concern) and an unmistakable plan (risk), written for these tests.
CONCERN_ENTRY = (
    "Work was long again. I sat in the car outside the house for twenty minutes before going "
    "in. Honestly my family would have an easier life if they didn't have to keep carrying me."
)
RISK_ENTRY = (
    "I keep back two of my sleeping tablets every night now; the jar in the drawer is nearly "
    "full. On Saturday everyone will be at the match and I'll have the flat to myself."
)
SECRET = "ZQX-never-in-a-log"


# An everyday entry (clearing a late grandfather's shed, no sign in it) that the model reads as
# a plan (a firearm, a date) with a chance between the threshold and the risk bar.
PLAN_BELOW_BAR = (
    "Found the old shotgun in Grandad's shed while clearing it out. Need to sort the licence or "
    "hand it in to the police before the house sale on the 20th."
)


@pytest.fixture(scope="module", autouse=True)
def _bank_loaded() -> None:
    semantic.read_texts(["Load the sentence model once for the module."])


def _answer(client, data, value):
    event = {"answer_to": data["action"]["action_id"], "value": value}
    return act(client, {"mode": "continue", "state": data["state"], "user_event": event}).json()


def _to_question(client, data):
    while data["action"]["type"] != "AskUser":
        data = act(client, {"mode": "continue", "state": data["state"]}).json()
    return data


def test_v3_concern_shows_resources_and_goes_on_with_a_question(client):
    data = init(client, CONCERN_ENTRY)
    assert data["complete"] is False
    assert data["safety"]["level"] == "concern" and data["safety"]["category"] == "burden"
    assert data["safety"]["crisis_resources"] and data["safety"]["message"]
    data = _to_question(client, data)
    assert data["action"]["type"] == "AskUser"
    # Every later turn keeps the resources on show.
    assert data["safety"]["level"] == "concern"
    assert CONCERN_ENTRY not in json.dumps(data["safety"])


def test_a_plan_read_by_meaning_under_the_risk_bar_is_a_concern_and_goes_on(client):
    """Read by meaning as a plan, but under ``Params.risk``: a concern, so v3 asks its
    question with the resources on show and v1 gives its reflection."""
    reading = semantic.read_texts([PLAN_BELOW_BAR])
    chance, category = semantic.judge(
        semantic.model(), reading.sentences, reading.whole, reading.text
    )
    assert category == "plan_means"
    assert semantic.PARAMS.concern <= chance < semantic.PARAMS.risk
    data = init(client, PLAN_BELOW_BAR)
    assert data["complete"] is False
    assert data["safety"]["level"] == "concern" and data["safety"]["category"] == "plan_means"
    assert data["safety"]["crisis_resources"]
    data = _to_question(client, data)
    assert data["action"]["type"] == "AskUser" and data["safety"]["level"] == "concern"
    reflection = client.post(
        "/reflections", {"journal_entry": {"text": PLAN_BELOW_BAR}}, format="json"
    )
    assert reflection.status_code == 200
    assert reflection.json()["safety"]["level"] == "concern"


def test_v3_risk_stops_with_the_level_and_category_never_the_words(client):
    data = init(client, RISK_ENTRY)
    assert data["complete"] is True and data["result"]["exit_reason"] == "guardrail"
    assert data["action"]["type"] == "Stop" and data["result"]["confirmed_crux"] is None
    assert data["safety"]["level"] == "risk" and data["safety"]["category"] == "plan_means"
    contacts = " ".join(r["contact"] for r in data["safety"]["crisis_resources"])
    assert "988" in contacts and "findahelpline.com" in contacts
    assert "tablets" not in json.dumps(data["safety"])


def test_v3_ordinary_entry_has_no_notice(client):
    data = init(client)
    assert data["safety"] == {
        "level": "none", "category": None, "message": None, "crisis_resources": []
    }  # fmt: skip


def test_v3_free_text_answer_with_a_plan_stops_the_loop(client):
    data = _to_question(client, init(client))
    data = _answer(client, data, "Not really, I've already picked the bridge and the night.")
    assert data["complete"] is True and data["result"]["exit_reason"] == "guardrail"
    assert data["safety"]["level"] == "risk"


def test_v3_a_second_sign_after_a_concern_is_a_risk(client):
    data = _to_question(client, init(client, CONCERN_ENTRY))
    data = _answer(client, data, "I've stopped answering anyone, I just want to disappear.")
    assert data["complete"] is True and data["safety"]["level"] == "risk"


def test_v3_quick_option_is_the_agents_words_and_is_not_read(client):
    data = _to_question(client, init(client))
    option = data["action"]["quick_options"][0]
    data = _answer(client, data, option)
    assert data["safety"]["level"] == "none"


def test_v1_reflection_refuses_at_risk_and_carries_a_concern(client):
    risk = client.post("/reflections", {"journal_entry": {"text": RISK_ENTRY}}, format="json")
    assert risk.status_code == 422
    body = risk.json()
    assert body["error_code"] == "guardrail" and body["guardrail"] == "risk"
    assert body["category"] == "plan_means" and body["crisis_resources"]
    concern = client.post("/reflections", {"journal_entry": {"text": CONCERN_ENTRY}}, format="json")
    assert concern.status_code == 200
    assert concern.json()["safety"]["level"] == "concern"
    assert concern.json()["perspectives"]["items"]


def test_v2_excavation_at_both_levels(client):
    risk = client.post(
        "/excavations", {"mode": "init", "journal_entry": {"text": RISK_ENTRY}}, format="json"
    )
    assert risk.status_code == 422 and risk.json()["guardrail"] == "risk"
    concern = client.post(
        "/excavations", {"mode": "init", "journal_entry": {"text": CONCERN_ENTRY}}, format="json"
    ).json()
    assert concern["safety"]["level"] == "concern" and concern["probe"]
    reply = client.post(
        "/excavations",
        {
            "mode": "step",
            "state": concern["state"],
            "expected_probe_id": concern["probe"]["probe_id"],
            "user_reply": "I gave my dog to my neighbour and wrote letters to my kids.",
        },
        format="json",
    )
    assert reply.status_code == 422 and reply.json()["guardrail"] == "risk"
    assert list(reply.json()["fields"]) == ["user_reply"]


def test_detections_are_counted_by_level_and_category(client, user):
    init(client, CONCERN_ENTRY)
    init(client, RISK_ENTRY)
    user.is_staff = True
    user.save()
    text = client.get("/metrics").content.decode()
    assert (
        'agent_distress_detections_total{category="burden",level="concern",where="act_init"}'
        in text
    )
    assert (
        'agent_distress_detections_total{category="plan_means",level="risk",where="act_init"}'
        in text
    )


def _all_text_columns() -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for model in apps.get_models():
        for field in model._meta.concrete_fields:
            if field.column and field.get_internal_type() in (
                "TextField",
                "CharField",
                "JSONField",
            ):
                found.append((model._meta.db_table, field.column))
    return found


def test_text_is_never_logged_or_stored(client, caplog):
    entry = f"{CONCERN_ENTRY} {SECRET}"
    with caplog.at_level(logging.DEBUG):
        data = _to_question(client, init(client, entry))
        _answer(client, data, f"I've been giving my things away. {SECRET}")
        client.post("/reflections", {"journal_entry": {"text": entry}}, format="json")
        client.post(
            "/excavations", {"mode": "init", "journal_entry": {"text": entry}}, format="json"
        )
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert caplog.records and SECRET not in logged and "carrying me" not in logged
    with connection.cursor() as cursor:
        for table, column in _all_text_columns():
            cursor.execute(
                f'SELECT count(*) FROM "{table}" WHERE "{column}"::text LIKE %s', [f"%{SECRET}%"]
            )
            assert cursor.fetchone()[0] == 0, (table, column)


# --- the chat-model layer ------------------------------------------------------------------------
@pytest.fixture
def screen_cli(monkeypatch, settings):
    """The model layer against a real subprocess standing in for the CLI."""
    settings.DISTRESS_MODEL_CHECK = "auto"
    monkeypatch.setenv("IV_CLI_CMD", f"{sys.executable} {FAKE_CLI}")

    def answer(value: str) -> None:
        monkeypatch.setenv("FAKE_SCREEN_ANSWER", value)

    return answer


def test_model_layer_can_raise_a_detection(client, screen_cli):
    screen_cli('{"level": "risk", "category": "goodbye"}')
    data = init(client, BOUNDARIES_ENTRY)
    assert data["result"]["exit_reason"] == "guardrail"
    assert data["safety"] == {**data["safety"], "level": "risk", "category": "goodbye"}


def test_model_layer_never_lowers_a_detection(client, screen_cli):
    screen_cli('{"level": "none", "category": null}')
    assert init(client, RISK_ENTRY)["safety"]["level"] == "risk"
    assert init(client, CONCERN_ENTRY)["safety"]["level"] == "concern"


@pytest.mark.parametrize("answer", ["I cannot help with that.", '{"level": "maybe"}', ""])
def test_model_layer_answer_that_is_unusable_changes_nothing(client, screen_cli, answer):
    screen_cli(answer)
    assert init(client, BOUNDARIES_ENTRY)["safety"]["level"] == "none"
    assert init(client, CONCERN_ENTRY)["safety"]["level"] == "concern"


def test_model_layer_over_openai_wire_raises_a_concern(client, settings, monkeypatch, openai_stub):
    settings.DISTRESS_MODEL_CHECK = "auto"
    monkeypatch.setenv("IV_CLI_CMD", "/bin/false")
    monkeypatch.setenv("GROK_API_KEY", "test-key")
    monkeypatch.setenv("GROK_BASE_URL", openai_stub.base_url)
    openai_stub.chat_fn = lambda messages: '{"level": "concern", "category": "withdrawal"}'
    data = init(client, BOUNDARIES_ENTRY)
    assert data["safety"]["level"] == "concern" and data["safety"]["category"] == "withdrawal"
    assert "Tash texted" in json.dumps(openai_stub.requests[-1]["body"])


def test_model_layer_off_is_never_asked(client, settings, monkeypatch, openai_stub):
    settings.DISTRESS_MODEL_CHECK = "off"
    settings.AGENT_CRUX_MODEL = "off"  # the model proposing the hypotheses would be asked too
    monkeypatch.setenv("GROK_API_KEY", "test-key")
    monkeypatch.setenv("GROK_BASE_URL", openai_stub.base_url)
    init(client, BOUNDARIES_ENTRY)
    assert openai_stub.requests == []
