"""Issue 32, the chat model proposing the hypotheses: with a chat model configured, the first
turn asks it once for two to four candidate cruxes of the entry (an archetype as the frame, the
writer's terms, the entry's sentences cited). The ones that pass the final crux's checks (and
name a catalogue archetype, cite the entry verbatim, differ in archetype) seed the graph and are
what the writer reads as options and, confirmed, as the crux; the offline seeds fill the places
left, or all of them when the answer is unusable or refused. The proposals travel in the signed
state, so no later turn asks the model again. The model is a real HTTP server on 127.0.0.1
speaking the OpenAI wire (Grok stage)."""

from __future__ import annotations

import json
import logging
import socket
import time
from typing import Any

import pytest

from agent.engine.beliefs import seed_nodes
from agent.engine.compose import Composed
from agent.engine.compose import options as compose_options
from agent.engine.proposals import refusal
from tests.agent.conftest import act, init

pytestmark = pytest.mark.django_db

ENTRY = (
    "Tash texted at midnight again asking if I could fit her in for a free appointment before "
    "work. I said yes, like I always say yes. I can't say no to her. Every time she asks I drop "
    "everything and help, and then I'm angry at myself for having no limits at all."
)
TEXTED = (
    "Tash texted at midnight again asking if I could fit her in for a free appointment before work."
)
SAYS_YES = "I said yes, like I always say yes."
CANT = "I can't say no to her."
DROP = (
    "Every time she asks I drop everything and help, and then I'm angry at myself for having "
    "no limits at all."
)
# Four grounded proposals, each framed by a different archetype.
PROPOSALS = {
    "boundaries": (
        "You keep saying yes to Tash, even at midnight, and then you're angry at yourself for it.",
        [CANT, SAYS_YES],
    ),
    "resentment_fairness": (
        "You give Tash free appointments before work and get nothing back for all that help.",
        [TEXTED],
    ),
    "need_for_approval": (
        "You drop everything whenever Tash asks, as if her asking decides "
        "whether you are good enough.",
        [DROP],
    ),
    "burnout": (
        "You fit Tash in at midnight and before work, and there is no time left that is yours.",
        [TEXTED],
    ),
}


def answer(cruxes: list[tuple[str, str, list[str]]]) -> str:
    items = [{"theme": t, "text": x, "evidence_spans": s} for t, x, s in cruxes]
    return "```json\n" + json.dumps({"cruxes": items}) + "\n```"


def proposing(*keys: str, raw: str | None = None, **changed: tuple[str, list[str]]):
    """A model that proposes PROPOSALS[k] for each of ``keys`` (``changed`` replaces one)."""

    def chat_fn(messages: list[dict[str, Any]]) -> str:
        if raw is not None:
            return raw
        return answer([(k, *changed.get(k, PROPOSALS[k])) for k in keys])

    return chat_fn


def chats(stub) -> list[dict[str, Any]]:
    return [r for r in stub.requests if r["path"].endswith("/chat/completions")]


def play(client, data: dict[str, Any], prefer: str = "") -> tuple[dict[str, Any], list[list]]:
    """Continue ``data`` to the end, answering each question with the option ``prefer`` (else
    the first); the result and the options of every question asked."""
    asked = []
    for _ in range(12):
        if data["complete"]:
            return data["result"], asked
        event = None
        if data["action"]["type"] == "AskUser":
            options = data["action"]["quick_options"]
            asked.append(options)
            value = prefer if prefer in options else options[0]
            event = {"answer_to": data["action"]["action_id"], "value": value}
        response = act(client, {"mode": "continue", "state": data["state"], "user_event": event})
        assert response.status_code == 200, response.content
        data = response.json()
    raise AssertionError("the play did not finish")


def nodes(data: dict[str, Any]) -> list[dict[str, Any]]:
    return data["state"]["belief_state"]["nodes"]


def test_the_models_proposals_are_the_options_and_the_confirmed_crux_cites_its_spans(client, grok):
    grok.chat_fn = proposing(*PROPOSALS)
    data = init(client, ENTRY)
    assert len(chats(grok)) == 1
    prompt = json.dumps(chats(grok)[0]["body"])
    assert "midnight" in prompt and "boundaries" in prompt  # the entry and the catalogue's keys
    seeded = {n["archetype"]: n["proposal"] for n in nodes(data)}
    assert set(seeded) == set(PROPOSALS)
    for key, (text, spans) in PROPOSALS.items():
        assert seeded[key] == {"text": text, "evidence_spans": spans}
        # The archetype's statement still drives the answer model; the proposal is what is shown.
        node = next(n for n in nodes(data) if n["archetype"] == key)
        assert node["text"] != text
    wanted = PROPOSALS["boundaries"][0]
    result, asked = play(client, data, prefer=wanted)
    texts = {t for t, _ in PROPOSALS.values()}
    assert asked and all(set(options[:-1]) <= texts for options in asked)
    assert any(wanted in options for options in asked)
    crux = result["confirmed_crux"]
    assert crux["text"] == wanted
    assert crux["evidence_spans"] == PROPOSALS["boundaries"][1]
    for theme in result["secondary_themes"]:
        assert theme["text"] in texts and all(s in ENTRY for s in theme["evidence_spans"])
    trail = result["reasoning_trail"]
    assert "hypotheses: proposed by the chat model (grok" in trail and "4 passed" in trail
    assert trail.splitlines()[-1] == "crux: the chat model's hypothesis, checked at the first turn"
    # The proposals travelled in the signed state: the model was asked once, at the first turn.
    assert len(chats(grok)) == 1


def test_refused_proposals_leave_their_places_to_the_offline_seeds(client, grok):
    grok.chat_fn = proposing(
        "boundaries",
        "resentment_fairness",
        "burnout",
        burnout=("You should tell Tash no before work and keep the evening for yourself.", [CANT]),
    )
    data = init(client, ENTRY)
    by_key = {n["archetype"]: n for n in nodes(data)}
    assert by_key["boundaries"]["proposal"]["text"] == PROPOSALS["boundaries"][0]
    assert by_key["resentment_fairness"]["proposal"]["text"] == PROPOSALS["resentment_fairness"][0]
    assert "burnout" not in by_key or by_key["burnout"]["proposal"] is None
    filled = [k for k, n in by_key.items() if n["proposal"] is None]
    offline = [n.archetype for n in seed_nodes(ENTRY)]
    assert len(by_key) == 4 and filled == [k for k in offline if k in filled]
    assert all(k in offline for k in filled)
    result, _ = play(client, data)
    trail = result["reasoning_trail"]
    assert "2 passed the checks, 1 refused (advice)" in trail
    assert "offline seeds beside them: " + ", ".join(filled) in trail
    assert len(chats(grok)) == 1


@pytest.mark.parametrize(
    ("changed", "why"),
    [
        (("You keep saying yes to Tash and to Marco, then resent it.", [CANT]), "invented name"),
        (("You can't refuse your sister or Tash, even at midnight.", [CANT]), "invented name"),
        (("You need to set limits with Tash before you burn out.", [CANT]), "advice"),
        (("Your codependency with Tash means you can't refuse her.", [CANT]), "diagnosis"),
        (("You keep saying yes to Tash " + "and yes again " * 20 + ".", [CANT]), "longer than"),
        (("You keep saying yes to Tash.", ["I never refuse Tash anything."]), "not verbatim"),
        (("You keep saying yes to Tash.", []), "no evidence span"),
        (("The writer cannot say no to Tash at midnight.", [CANT]), "second person"),
        (("You are simply too kind to Tash at midnight.", [CANT]), "leading wording"),
    ],
)
def test_each_refusal_falls_back_to_the_offline_seeds(client, grok, changed, why):
    keys = ("boundaries", "burnout")
    grok.chat_fn = proposing(*keys, **dict.fromkeys(keys, changed))
    data = init(client, ENTRY)
    assert all(n["proposal"] is None for n in nodes(data))
    assert [n["archetype"] for n in nodes(data)] == [n.archetype for n in seed_nodes(ENTRY)]
    result, _ = play(client, data)
    trail = result["reasoning_trail"]
    assert "hypotheses: offline composer; the grok answer was refused (" in trail
    assert why in trail.splitlines()[-1]
    assert trail.splitlines()[-1].startswith("crux: offline composer; the grok answer was refused")
    assert all(s in ENTRY for s in result["confirmed_crux"]["evidence_spans"])
    assert len(chats(grok)) == 1  # the fallback does not ask again at the end


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        (
            answer([("jealousy", *PROPOSALS["boundaries"])]),
            "refused (a theme outside the catalogue)",
        ),
        ("Sure! The crux: you can't say no to Tash.", "unusable (not a JSON object)"),
        ('{"cruxes": [{"theme": "boundaries"}]}', "unusable (a crux without text"),
        ('{"hypotheses": []}', "unusable (no cruxes list)"),
    ],
)
def test_a_bad_archetype_or_bad_json_falls_back(client, grok, raw, why):
    grok.chat_fn = proposing(raw=raw)
    data = init(client, ENTRY)
    assert all(n["proposal"] is None for n in nodes(data))
    assert [n["archetype"] for n in nodes(data)] == [n.archetype for n in seed_nodes(ENTRY)]
    result, _ = play(client, data)
    assert f"hypotheses: offline composer; the grok answer was {why}" in result["reasoning_trail"]
    assert len(chats(grok)) == 1


def test_the_same_archetype_twice_keeps_the_first(client, grok):
    grok.chat_fn = proposing(raw=answer([("boundaries", *PROPOSALS["boundaries"])] * 2))
    data = init(client, ENTRY)
    assert [n["archetype"] for n in nodes(data) if n["proposal"]] == ["boundaries"]
    result, _ = play(client, data)
    assert "1 passed the checks, 1 refused (a theme proposed twice)" in result["reasoning_trail"]


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_model_server_that_is_down_leaves_the_offline_seeds(client, grok, monkeypatch):
    monkeypatch.setenv("GROK_BASE_URL", f"http://127.0.0.1:{_closed_port()}/v1")
    data = init(client, ENTRY)
    assert [n["archetype"] for n in nodes(data)] == [n.archetype for n in seed_nodes(ENTRY)]
    result, _ = play(client, data)
    trail = result["reasoning_trail"]
    assert "hypotheses: offline composer; no chat model answered" in trail
    assert trail.splitlines()[-1] == "crux: offline composer; no chat model answered"


def test_a_hanging_model_costs_the_first_turn_one_timeout_and_later_turns_nothing(
    client, grok, monkeypatch
):
    monkeypatch.setenv("GROK_TIMEOUT", "1")
    grok.chat_fn = lambda messages: time.sleep(2.5) or proposing(*PROPOSALS)(messages)
    started = time.monotonic()
    data = init(client, ENTRY)
    assert time.monotonic() - started < 2.2
    assert all(n["proposal"] is None for n in nodes(data))
    started = time.monotonic()
    result, _ = play(client, data)
    assert time.monotonic() - started < 2.0  # no turn after the first waits on the model
    assert result["reasoning_trail"].splitlines()[-1] == (
        "crux: offline composer; no chat model answered"
    )
    assert len(chats(grok)) == 1


def test_a_proposal_cannot_be_changed_by_the_client(client, grok):
    grok.chat_fn = proposing(*PROPOSALS)
    data = init(client, ENTRY)
    state = json.loads(json.dumps(data["state"]))
    state["belief_state"]["nodes"][0]["proposal"]["text"] = "You are wonderful."
    action = data["action"]
    event = None
    if action["type"] == "AskUser":
        event = {"answer_to": action["action_id"], "value": action["quick_options"][0]}
    response = act(client, {"mode": "continue", "state": state, "user_event": event})
    assert response.status_code == 409
    assert response.json()["error_code"] == "integrity_mismatch"


def test_without_a_model_the_offline_seeds_and_options_are_as_before(client, grok, settings):
    settings.AGENT_CRUX_MODEL = "off"
    grok.chat_fn = proposing(*PROPOSALS)
    data = init(client, ENTRY)
    assert [n["archetype"] for n in nodes(data)] == [n.archetype for n in seed_nodes(ENTRY)]
    assert all(n["proposal"] is None for n in nodes(data))
    seed = data["state"]["evidence_log"][0]["payload"]
    assert "wording" not in seed and "hypotheses" not in seed["summary"]
    by_id = {n["node_id"]: n["archetype"] for n in nodes(data)}
    result, asked = play(client, data)
    for options in asked:
        assert not set(options) & {t for t, _ in PROPOSALS.values()}
    first = data["action"]
    if first["type"] == "AskUser":
        targets = [by_id[t] for t in first["targets"]]
        assert first["quick_options"][:-1] == compose_options(ENTRY, targets)
    assert result["reasoning_trail"].splitlines()[-1] == "crux: offline composer"
    assert chats(grok) == []


def test_the_journal_text_is_never_logged(client, grok, caplog):
    caplog.set_level(logging.INFO)
    for chat_fn in (
        proposing(*PROPOSALS),
        proposing("boundaries", boundaries=("You keep saying yes to Tash and Marco.", [CANT])),
        proposing(raw="not json: I can't say no to her."),
    ):
        grok.chat_fn = chat_fn
        play(client, init(client, ENTRY), prefer=PROPOSALS["boundaries"][0])
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "crux proposals" in logged  # the refusals were logged, without the entry's words
    for sentence in (TEXTED, SAYS_YES, CANT, DROP, "midnight", "Tash"):
        assert sentence not in logged


def test_refusal_names_each_check():
    ok = Composed(*PROPOSALS["boundaries"])
    assert refusal("boundaries", ok, ENTRY, {}) == ""
    assert refusal("boundaries", ok, ENTRY, {"boundaries": ok}) == "a theme proposed twice"
    assert refusal("burnout", ok, ENTRY, {"boundaries": ok}) == "the same crux twice"
    assert refusal(7, ok, ENTRY, {}) == "a theme outside the catalogue"
    assert refusal("fear", ok, ENTRY, {}) == "a theme outside the catalogue"
    assert refusal(
        "boundaries", Composed("You obviously can't say no to Tash.", [CANT]), ENTRY, {}
    ).startswith("leading wording")
