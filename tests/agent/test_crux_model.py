"""Issue 32, the chat-model path at the last turn: for a play whose first turn had no chat model
configured (with one, the model proposes the hypotheses then and is not asked again:
test_crux_proposals.py), the model phrases the confirmed crux and the secondary themes from the
entry; its answer is used only when it cites the entry verbatim, names nothing the entry does
not name, holds no diagnosis or advice, speaks to the writer and stays short. Anything else
keeps the offline composer's crux, and the reasoning trail says why. The checks themselves are
the ones the proposals pass. The model is a real HTTP server on 127.0.0.1 speaking the OpenAI
wire (Grok stage)."""

from __future__ import annotations

import json
import re
import time
from typing import Any

import pytest

from agent.engine.compose import FRAMES, Composed
from agent.engine.phrasing import invented, parse, problems
from tests.agent.conftest import FIXTURES, act, init

pytestmark = pytest.mark.django_db

ENTRY = (
    "Tash texted at midnight again asking if I could fit her in for a free appointment before "
    "work. I said yes, like I always say yes. I can't say no to her. Every time she asks I drop "
    "everything and help, and then I'm angry at myself for having no limits at all."
)
SPAN = "I can't say no to her."
GOOD = "You keep saying yes to Tash, even at midnight, and then you're angry at yourself for it."


def keys_asked(messages: list[dict[str, Any]]) -> list[str]:
    """The theme keys the agent asked the model for, first the confirmed one."""
    found = re.search(r"theme keys: ([a-z_, ]+)\.", messages[-1]["content"])
    assert found, "the prompt names the theme keys"
    return [k.strip() for k in found.group(1).split(",")]


def answering(text: str, spans: list[str] | None = None, *, raw: str | None = None):
    """A model that answers every theme asked with ``text`` citing ``spans`` (or ``raw``)."""

    def chat_fn(messages: list[dict[str, Any]]) -> str:
        if raw is not None:
            return raw
        cruxes = [
            {"theme": key, "text": text, "evidence_spans": [SPAN] if spans is None else spans}
            for key in keys_asked(messages)
        ]
        return "```json\n" + json.dumps({"cruxes": cruxes}) + "\n```"

    return chat_fn


def play(client, settings) -> dict[str, Any]:
    """A play begun before the chat model was configured, finished with it."""
    mode = settings.AGENT_CRUX_MODEL
    settings.AGENT_CRUX_MODEL = "off"
    data = init(client, ENTRY)
    settings.AGENT_CRUX_MODEL = mode
    for _ in range(12):
        if data["complete"]:
            return data["result"]
        event = None
        if data["action"]["type"] == "AskUser":
            event = {
                "answer_to": data["action"]["action_id"],
                "value": data["action"]["quick_options"][0],
            }
        response = act(client, {"mode": "continue", "state": data["state"], "user_event": event})
        assert response.status_code == 200, response.content
        data = response.json()
    raise AssertionError("the play did not finish")


def offline_crux(result: dict[str, Any]) -> bool:
    crux = result["confirmed_crux"]
    return crux["text"].startswith(tuple(FRAMES.values())) and all(
        span in ENTRY for span in crux["evidence_spans"]
    )


def test_a_valid_model_answer_is_the_crux_and_the_trail_says_so(client, grok, settings):
    grok.chat_fn = answering(GOOD)
    result = play(client, settings)
    crux = result["confirmed_crux"]
    assert crux["text"] == GOOD
    assert crux["evidence_spans"] == [SPAN]
    assert "crux: phrased by the chat model (grok" in result["reasoning_trail"]
    for theme in result["secondary_themes"]:
        assert theme["text"] == GOOD and theme["evidence_spans"] == [SPAN]
    chats = [r for r in grok.requests if r["path"].endswith("/chat/completions")]
    assert len(chats) == 1
    assert "midnight" in json.dumps(chats[0]["body"])  # the entry reached the model


@pytest.mark.parametrize(
    ("chat", "why"),
    [
        (answering("You keep saying yes to Tash and to Marco, then resent it."), "invented name"),
        (answering("You keep saying yes to your brother and to Tash at midnight."), "invented"),
        (answering("Your codependency with Tash means you can't refuse her."), "diagnosis"),
        (answering("You should tell Tash no next time she texts at midnight."), "advice"),
        (answering("You keep saying yes to Tash, even at midnight.", []), "no evidence span"),
        (
            answering("You keep saying yes to Tash.", ["I never refuse Tash anything."]),
            "not verbatim",
        ),
        (answering("The writer cannot say no to Tash at midnight."), "second person"),
        (answering("You keep saying yes to Tash " + "and yes again " * 20 + "."), "longer than"),
        (answering("", raw="Sure! Here is the crux: you can't say no."), "unusable"),
        (answering("", raw='{"cruxes": [{"theme": "x"}]}'), "unusable"),
    ],
)
def test_each_failed_check_falls_back_to_the_offline_composer(client, grok, settings, chat, why):
    grok.chat_fn = chat
    result = play(client, settings)
    assert offline_crux(result), result["confirmed_crux"]
    trail = result["reasoning_trail"]
    assert "crux: offline composer; the grok answer was" in trail
    assert why in trail.splitlines()[-1]


def test_a_hanging_model_falls_back_within_grok_timeout(client, grok, monkeypatch, settings):
    monkeypatch.setenv("GROK_TIMEOUT", "1")
    grok.chat_fn = lambda messages: time.sleep(2.5) or answering(GOOD)(messages)
    settings.AGENT_CRUX_MODEL = "off"
    data = init(client, ENTRY)
    settings.AGENT_CRUX_MODEL = "auto"
    while not data["complete"]:
        event = None
        if data["action"]["type"] == "AskUser":
            event = {
                "answer_to": data["action"]["action_id"],
                "value": data["action"]["quick_options"][0],
            }
        body = {"mode": "continue", "state": data["state"], "user_event": event}
        started = time.monotonic()
        data = act(client, body).json()
        elapsed = time.monotonic() - started
    result = data["result"]
    assert elapsed < 2.2  # the final turn waited GROK_TIMEOUT, not the model's 2.5 s
    assert offline_crux(result)
    assert "crux: offline composer; no chat model answered" in result["reasoning_trail"]


def test_turned_off_the_model_is_never_asked(client, grok, settings):
    settings.AGENT_CRUX_MODEL = "off"
    grok.chat_fn = answering(GOOD)
    result = play(client, settings)
    assert offline_crux(result)
    assert result["reasoning_trail"].splitlines()[-1] == "crux: offline composer"
    assert grok.requests == []


# The checks one by one, on the model's parsed answer.


def test_the_checks_pass_a_grounded_second_person_crux():
    assert problems(Composed(GOOD, [SPAN]), ENTRY) == []
    # A sentence may start with a common word the entry uses in lower case.
    assert invented("You said yes. Every time she asks, you drop everything.", ENTRY) == []
    # Quoting a name of the entry is not inventing one.
    assert invented("You keep answering Tash at midnight.", ENTRY) == []


def test_the_checks_find_names_people_diagnoses_and_advice_the_entry_does_not_hold():
    assert invented("You keep saying yes to Tash and Priya.", ENTRY) == ["Priya"]
    assert invented("Priya keeps asking you.", ENTRY) == ["Priya"]
    assert invented("You can't refuse your sister.", ENTRY) == ["sister"]
    assert "diagnosis" in problems(
        Composed("Your anxiety disorder keeps you saying yes.", [SPAN]), ENTRY
    )
    assert "advice" in problems(Composed("Try saying no to Tash, you deserve rest.", [SPAN]), ENTRY)
    assert "advice" in problems(Composed("You need to set limits with Tash.", [SPAN]), ENTRY)
    # The writer's own word is not a diagnosis the model made.
    own = "My therapist says it's my ADHD. " + ENTRY
    assert "diagnosis" not in problems(
        Composed("You wonder whether your ADHD is why you say yes to Tash.", [SPAN]), own
    )


def test_the_checks_pass_the_train_writers_gold_cruxes():
    """The gold cruxes of the training writers (tests/agent/fixtures/crux/writer_01..04) are
    what a good model answer looks like: nearly all of them pass. Those refused are a relation
    the entry does not name ("your brother" for Malcolm), a directive ("you need to really
    repair things") and a gold span shorter than three words."""
    passed = total = 0
    for n in (1, 2, 3, 4):
        for line in (FIXTURES / "crux" / f"writer_0{n}.jsonl").open():
            item = json.loads(line)
            total += 1
            passed += not problems(Composed(item["gold_crux"], item["gold_spans"]), item["entry"])
    assert total == 160 and passed >= 155


def test_parse_reads_fenced_json_and_refuses_an_answer_without_the_confirmed_theme():
    raw = '```json\n{"cruxes": [{"theme": "boundaries", "text": "You x.", "evidence_spans": ["a b c"]}]}\n```'
    assert parse(raw, ["boundaries"])["boundaries"] == Composed("You x.", ["a b c"])
    with pytest.raises(ValueError, match="confirmed theme"):
        parse(raw, ["burnout", "boundaries"])
    with pytest.raises(ValueError, match="not a JSON object"):
        parse("no json here", ["boundaries"])
