"""/v3/agent/act: integrity, revisions, idempotency, concurrency, errors, guardrail, metrics."""

from __future__ import annotations

import hashlib
import json
import logging
import subprocess
import sys
import uuid

import pytest

from agent.engine.archetypes import BY_KEY, THEMES
from tests.agent.conftest import (
    BOUNDARIES_ENTRY,
    MIXED_ENTRY,
    act,
    advance,
    init,
    load,
    one_rate_window,
    run_to_question,
)

pytestmark = pytest.mark.django_db


# Data a client acts on travels beside the envelope, never inside `fields`.
EXTRAS = {"expected", "retry_after", "guardrail", "category", "crisis_resources"}


def envelope(response, status: int, code: str) -> dict:
    assert response.status_code == status, response.content
    body = response.json()
    assert (
        {"error_code", "detail", "fields"}
        <= set(body)
        <= {"error_code", "detail", "fields"} | EXTRAS
    )
    assert body["error_code"] == code
    # The project's convention: field path → a list of messages for a person.
    for messages in body["fields"].values():
        assert isinstance(messages, list) and all(isinstance(m, str) and m for m in messages)
    return body


def test_hmac_mismatch_is_409(client):
    data = init(client)
    data["state"]["budget_used"] = 0
    data["state"]["journal_entry"]["text"] += " (edited)"
    envelope(advance(client, data), 409, "integrity_mismatch")


def test_missing_integrity_is_409(client):
    data = init(client)
    data["state"]["integrity"] = None
    envelope(advance(client, data), 409, "integrity_mismatch")


@pytest.mark.parametrize("forged", ["é" * 64, "ﬀ", "\U0001f600" + "0" * 63])
def test_non_ascii_integrity_is_409_not_a_crash(client, forged):
    # hmac.compare_digest raises TypeError for a str with non-ASCII characters (it was a 500).
    data = init(client)
    data["state"]["integrity"] = forged
    envelope(advance(client, data), 409, "integrity_mismatch")


def test_state_signed_with_another_secret_is_409(client, settings):
    data = init(client)
    settings.AGENT_STATE_SECRET = "rotated"
    envelope(advance(client, data), 409, "integrity_mismatch")


def test_stale_revision_is_409(client):
    data = init(client)
    assert advance(client, data).status_code == 200
    envelope(advance(client, data), 409, "stale_revision")


def test_answer_to_not_matching_last_askuser_is_410(client):
    data = run_to_question(client, init(client))
    event = {"answer_to": str(uuid.uuid4()), "value": data["action"]["quick_options"][0]}
    body = envelope(
        act(client, {"mode": "continue", "state": data["state"], "user_event": event}),
        410,
        "answer_mismatch",
    )
    assert body["fields"] == {"user_event.answer_to": ["Does not match the open question."]}
    assert body["expected"] == data["action"]["action_id"]
    # Nothing was lost: the right answer for the same revision still goes through.
    assert advance(client, data).status_code == 200


def test_answer_when_no_question_is_open_is_410(client, settings):
    settings.AGENT_EVIDENCE_REQUESTS = "always"  # so an internal step comes first
    data = init(client, MIXED_ENTRY)  # its first action is an internal step
    assert data["action"]["type"] != "AskUser"
    event = {"answer_to": str(uuid.uuid4()), "value": "x"}
    envelope(
        act(client, {"mode": "continue", "state": data["state"], "user_event": event}),
        410,
        "answer_mismatch",
    )


def test_missing_answer_to_open_question_is_400(client):
    data = run_to_question(client, init(client))
    body = envelope(
        act(client, {"mode": "continue", "state": data["state"]}), 400, "answer_required"
    )
    assert list(body["fields"]) == ["user_event"]
    event = {"value": data["action"]["quick_options"][0]}
    body = envelope(
        act(client, {"mode": "continue", "state": data["state"], "user_event": event}),
        400,
        "answer_required",
    )
    assert list(body["fields"]) == ["user_event.answer_to"]


@pytest.mark.parametrize("answer_to", [123, 1.5, ["x"], {"id": "x"}, True, "not-a-uuid"])
def test_answer_to_that_is_not_a_uuid_string_is_400_naming_it(client, answer_to):
    data = run_to_question(client, init(client))
    event = {"answer_to": answer_to, "value": data["action"]["quick_options"][0]}
    body = envelope(
        act(client, {"mode": "continue", "state": data["state"], "user_event": event}),
        400,
        "invalid",
    )
    assert list(body["fields"]) == ["user_event.answer_to"]
    # Bad input takes nothing: the same revision still accepts the right answer.
    assert advance(client, data).status_code == 200


def test_blank_or_too_long_answer_value_is_400_naming_it(client):
    data = run_to_question(client, init(client))
    for value in ["   ", "x" * 2001, 7]:
        event = {"answer_to": data["action"]["action_id"], "value": value}
        body = envelope(
            act(client, {"mode": "continue", "state": data["state"], "user_event": event}),
            400,
            "answer_required",
        )
        assert list(body["fields"]) == ["user_event.value"]


def test_invalid_request_is_400_with_fields(client):
    body = envelope(act(client, {"mode": "init", "journal_entry": {"text": ""}}), 400, "invalid")
    assert list(body["fields"]) == ["journal_entry.text"]  # the body's path, no union tag
    body = envelope(act(client, {"mode": "bogus"}), 400, "invalid")
    assert list(body["fields"]) == ["mode"]


@pytest.mark.parametrize("text", ["   ", "\n\t \n", "\u3000 "])
def test_whitespace_only_entry_is_refused_like_an_empty_one(client, text):
    body = envelope(act(client, {"mode": "init", "journal_entry": {"text": text}}), 400, "invalid")
    assert body["fields"] == {"journal_entry.text": ["This field may not be blank."]}


def test_rate_guard_is_429(client, settings):
    one_rate_window(settings, client, per_minute=2)
    init(client)
    init(client)
    response = act(client, {"mode": "init", "journal_entry": {"text": "hello"}})
    body = envelope(response, 429, "rate_limited")
    assert body["fields"] == {}
    assert 0 < body["retry_after"] <= 60
    assert response["Retry-After"] == str(body["retry_after"])


def test_continuing_a_budget_exhausted_session_is_429(client, settings):
    settings.MAX_STEPS = 2
    data = init(client)
    data = advance(client, data).json()
    assert data["complete"] and data["result"]["exit_reason"] == "budget"
    envelope(advance(client, data), 429, "budget_exhausted")


def test_continuing_a_completed_session_is_409(client, settings):
    settings.EPSILON_EVI = 5.0
    data = init(client)
    envelope(advance(client, data), 409, "state_complete")


def test_idempotent_replay_is_byte_identical(client):
    data = init(client)
    first = advance(client, data, HTTP_IDEMPOTENCY_KEY="key-1")
    again = advance(client, data, HTTP_IDEMPOTENCY_KEY="key-1")
    assert first.status_code == again.status_code == 200
    assert first.content == again.content
    # Another key for the same revision is a second continue: rejected.
    envelope(advance(client, data, HTTP_IDEMPOTENCY_KEY="key-2"), 409, "stale_revision")


def test_idempotency_key_reused_with_a_different_body_is_422(client):
    data = run_to_question(client, init(client))
    first = advance(client, data, pick=0, HTTP_IDEMPOTENCY_KEY="key-1")
    assert first.status_code == 200
    other = advance(client, data, pick=1, HTTP_IDEMPOTENCY_KEY="key-1")
    body = envelope(other, 422, "idempotency_key_reused")
    assert list(body["fields"]) == ["Idempotency-Key"]
    # The same body under the key still replays the first answer, byte for byte; the same
    # content with its keys in another order is the same request.
    event = {"value": data["action"]["quick_options"][0], "answer_to": data["action"]["action_id"]}
    again = act(
        client,
        {"user_event": event, "state": data["state"], "mode": "continue"},
        HTTP_IDEMPOTENCY_KEY="key-1",
    )
    assert again.status_code == 200 and again.content == first.content


def test_idempotent_replay_expires(client, settings):
    from django.db import connection

    settings.AGENT_IDEMPOTENCY_TTL = 120
    data = init(client)
    advance(client, data, HTTP_IDEMPOTENCY_KEY="k")

    # clock_timestamp(), not now(): now() is when the test's transaction began, seconds before
    # the turn on a busy machine.
    with connection.cursor() as cur:
        cur.execute(
            "SELECT expires - clock_timestamp() FROM legacymind_cache WHERE cache_key LIKE %s",
            ["%:idem:%"],
        )
        (ttl,) = cur.fetchone()
    assert 100 <= ttl.total_seconds() <= 121


def test_continue_is_deterministic_for_the_same_state(client, settings):
    """Same state, same turn seed: two servers would pick the same action."""
    from agent.engine.loop import step
    from agent.schemas import AgentState

    settings.AGENT_EVIDENCE_REQUESTS = "always"  # so an internal step comes first
    data = init(client, MIXED_ENTRY)  # its first action is an internal step
    a = step(AgentState.model_validate(data["state"]), None)
    b = step(AgentState.model_validate(data["state"]), None)
    assert a.action_type == b.action_type
    assert a.seed == b.seed


@pytest.mark.django_db(transaction=True)
def test_parallel_continues_from_two_processes_one_wins(live_server, client, user, settings):
    from rest_framework.authtoken.models import Token

    settings.AGENT_EVIDENCE_REQUESTS = "always"  # so an internal step comes first
    data = init(client, MIXED_ENTRY)  # its first action is an internal step
    body = json.dumps({"mode": "continue", "state": data["state"], "user_event": None})
    token = Token.objects.create(user=user).key
    script = (
        "import sys, urllib.request, urllib.error\n"
        "req = urllib.request.Request(sys.argv[1], data=sys.argv[2].encode(), "
        "headers={'Content-Type': 'application/json', 'Authorization': 'Token ' + sys.argv[3]})\n"
        "try:\n print(urllib.request.urlopen(req, timeout=30).status)\n"
        "except urllib.error.HTTPError as e:\n print(e.code, e.read().decode())\n"
    )
    url = live_server.url + "/v3/agent/act"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script, url, body, token], stdout=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    outputs = sorted(p.communicate(timeout=60)[0].strip() for p in procs)
    assert outputs[0] == "200"
    assert outputs[1].startswith("409")
    assert json.loads(outputs[1][4:])["error_code"] in ("stale_revision", "revision_in_progress")


@pytest.mark.parametrize("item", [i for i in load("crux_safety_dev.jsonl")], ids=lambda i: i["id"])
def test_distress_gate_on_safety_dev_set(client, item):
    data = init(client, item["entry"])
    if item["safety"] == "explicit":
        assert data["complete"] is True
        result = data["result"]
        assert result["exit_reason"] == "guardrail"
        assert result["confirmed_crux"] is None
        contacts = " ".join(r["contact"] for r in result["crisis_resources"])
        assert "988" in contacts and "HOME to 741741" in contacts
        assert "findahelpline.com" in contacts and "911" in contacts
        assert data["action"]["type"] == "Stop"
        assert data["safety"]["level"] == "risk"
    elif item["safety"] == "indirect":
        # Caught at either level: risk stops the loop, concern shows the resources first.
        assert data["safety"]["level"] in ("concern", "risk")
        assert data["safety"]["crisis_resources"]
        assert (data["safety"]["level"] == "risk") == data["complete"]
    else:
        assert data["safety"]["level"] != "risk"
        assert not (data["complete"] and data["result"]["exit_reason"] == "guardrail")


@pytest.mark.parametrize(
    "text",
    [
        "This deadline is killing me.",
        "I nearly died of boredom.",
        "My rogue failed three death saves.",
    ],
)
def test_dark_but_safe_answers_do_not_trip_the_gate(client, text):
    data = run_to_question(client, init(client))
    event = {"answer_to": data["action"]["action_id"], "value": text}
    data = act(client, {"mode": "continue", "state": data["state"], "user_event": event}).json()
    assert not (data["complete"] and data["result"]["exit_reason"] == "guardrail")


def test_distress_in_an_answer_stops_with_guardrail_and_never_asks_again(client):
    data = run_to_question(client, init(client))
    event = {
        "answer_to": data["action"]["action_id"],
        "value": "Honestly I want to die, I've picked the night already.",
    }
    response = act(client, {"mode": "continue", "state": data["state"], "user_event": event})
    data = response.json()
    assert data["complete"] is True and data["result"]["exit_reason"] == "guardrail"
    assert data["result"]["crisis_resources"]
    assert data["action"]["type"] == "Stop"
    # The session is over: continuing again is refused, no further question is possible.
    envelope(advance(client, data), 409, "state_complete")


def test_metrics_are_exposed(client, user):
    data = init(client)
    advance(client, data)
    init(client, load("crux_safety_dev.jsonl")[0]["entry"])
    user.is_staff = True  # the metrics are staff's
    user.save()
    text = client.get("/metrics").content.decode()
    for name in (
        "agent_turns_total",
        "agent_completions_total",
        "agent_action_latency_ms_bucket",
        "avg_action_latency_ms",
        "askuser_rate",
        "entropy_reduction_bits_bucket",
    ):
        assert name in text
    assert 'agent_completions_total{exit_reason="guardrail"}' in text


def test_turn_log_line_has_hashes_never_text(client, caplog):
    with caplog.at_level(logging.INFO, logger="agent.turns"):
        data = run_to_question(client, init(client))
    lines = [r.getMessage() for r in caplog.records if r.name == "agent.turns"]
    assert lines
    record = json.loads(lines[-1].split(" ", 1)[1])
    assert {
        "state_id",
        "revision",
        "action_type",
        "evi_bits",
        "exit_reason",
        "entry_sha",
        "question_sha",
        "seed",
        "top2",
    } <= set(record)
    assert record["action_type"] == "AskUser" and record["question_sha"] != "-"
    joined = "\n".join(lines)
    assert "Tash" not in joined and "midnight" not in joined
    assert data["action"]["question"] not in joined
    assert BOUNDARIES_ENTRY[:20] not in joined
    # Keyed: the log cannot be matched against the hash of a guessed entry.
    plain = hashlib.sha256(BOUNDARIES_ENTRY.encode()).hexdigest()[:16]
    shas = {json.loads(line.split(" ", 1)[1])["entry_sha"] for line in lines}
    assert len(shas) == 1 and plain not in shas and plain not in joined


def test_openapi_schema_documents_the_agent_and_is_valid(client, user):
    from drf_spectacular.generators import SchemaGenerator
    from drf_spectacular.validation import validate_schema

    schema = SchemaGenerator().get_schema(request=None, public=True)
    validate_schema(schema)
    op = schema["paths"]["/v3/agent/act"]["post"]
    assert op["operationId"] == "postAgentAct"
    components = schema["components"]["schemas"]
    assert "AgentActResponse" in components
    assert {"409", "410", "422", "429"} <= set(op["responses"])
    # Every error answer of every agent endpoint is the project's envelope (with the agent's
    # optional extras), not a free-form object.
    assert {"error_code", "detail", "fields"} <= set(components["AgentErrorOut"]["properties"])
    envelope_ref = "#/components/schemas/AgentErrorOut"
    for path in ("/v3/agent/act", "/excavations", "/v2/reflections", "/reflections"):
        responses = schema["paths"][path]["post"]["responses"]
        errors = {code: r for code, r in responses.items() if code >= "400"}
        assert errors, path
        for code, answer in errors.items():
            ref = answer["content"]["application/json"]["schema"]["$ref"]
            assert ref in (envelope_ref, "#/components/schemas/ErrorOut"), (path, code)
    excavation = schema["paths"]["/excavations"]["post"]["responses"]
    for code in ("409", "410", "422"):
        assert excavation[code]["content"]["application/json"]["schema"]["$ref"] == envelope_ref


@pytest.mark.parametrize(
    ("text", "levels"),
    [
        # Someone else's words about the writer are not the writer's intent: never a risk.
        ("I screamed in the stockroom and Lou thought I'd cut myself.", {"none", "concern"}),
        ("Tonight I thought about how I'd cut myself again.", {"risk"}),
        ("I keep thinking they'd all be better off without me.", {"concern", "risk"}),
        # An idiom is never read as intent. (The entry's other sentence, "can't say no", is a
        # known false positive of the semantic layer at concern: docs/benchmarks.md.)
        ("I murdered that song at karaoke and I regret nothing.", {"none", "concern"}),
    ],
)
def test_distress_gate_reads_who_is_at_risk(client, text, levels):
    data = init(client, text + " " + "I keep saying yes to everyone and can't say no.")
    assert data["safety"]["level"] in levels


def test_a_question_says_in_plain_words_what_it_tells_apart(client):
    action = run_to_question(client, init(client))["action"]
    rationale = action["rationale"]
    assert rationale.startswith("This question tells apart ") and rationale.endswith(".")
    assert " and " in rationale and " vs " not in rationale and "_" not in rationale
    listed = rationale.removeprefix("This question tells apart ").removesuffix(".")
    named = [n for part in listed.split(" and ") for n in part.split(", ")]
    assert named and all(n in THEMES.values() or n == "your own words" for n in named)


def test_every_theme_has_words_a_writer_reads():
    assert set(THEMES) == set(BY_KEY)
    assert all(words and "_" not in words for words in THEMES.values())
