# ruff: noqa: RUF001  (curly quotes and apostrophes are what entries contain)
"""The checks every crux of a chat model passes, and the final crux phrased by the model for a
play whose first turn had none configured (issue 32).

When a chat model is configured (``AGENT_CRUX_MODEL``: ``auto`` when the environment names a
CLI command or a Grok key, as the extractor chain's providers; ``on``; ``off``) at a play's first
turn, the model proposes the hypotheses then (agent/engine/proposals.py), each checked by
:func:`problems`; the confirmed one keeps its words, and the model is not asked again.

A play begun without one (a model configured since, or a state from before the proposals) is
phrased here at its last turn: the beliefs decide which hypothesis the writer confirmed (an
archetype: it drives the answer model and the stop rule), and the model reads the entry and the
live hypotheses and proposes, for the confirmed one and each secondary theme, a crux in the
writer's terms with the entry's sentences it rests on.

Its answer, like each proposal, is used only when it passes :func:`problems`:

- it is the JSON object asked for, with a crux for each hypothesis asked about;
- each crux cites one to three spans of the entry, verbatim;
- it is in the second person ("you"), not about "the writer";
- it names no person, place or thing the entry does not name;
- it holds no diagnosis and no advice;
- it stays within :data:`MAX_WORDS` words.

Anything else (no model answered, a timeout, malformed JSON, one failed check) keeps the
offline composer's crux, and the reasoning trail says which and why. The entry goes to the
model the operator chose and nowhere else; it is never logged.
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from django.conf import settings

from agent.engine.compose import FRAMES, Composed
from legacymind.providers import chat

logger = logging.getLogger("agent.crux")
CONFIGURING = ("IV_CLI_CMD", "IV_SYNTH_CLI_CMD", "GROK_API_KEY")
MAX_WORDS = 32  # a model's crux is short; the offline composer's may quote more (compose.MAX_WORDS)
MAX_SPANS = 3
MAX_SPAN_WORDS = 40
MIN_SPAN_WORDS = 3

SYSTEM = (
    "You help a person understand the crux of their own journal entry. You are given the "
    "entry and the themes it may be about, each with a key. For each theme key asked, write "
    "one sentence to the writer, in the second person ('you'), at most 30 words, that says "
    "what that theme looks like in this entry, naming only people, places and things the "
    "entry names. No diagnosis, no labels of disorders, no advice, no questions. Cite the "
    "sentence or sentences of the entry it rests on, copied exactly, character for "
    "character. Answer with ONE JSON object only: "
    '{"cruxes": [{"theme": "<key>", "text": "<sentence>", "evidence_spans": ["<exact '
    'words of the entry>"]}]}'
)

_SECOND_PERSON = re.compile(r"\b(?:you|your|yours|yourself|you're|you’re|you've|you’ve)\b", re.I)
_THIRD_PERSON = re.compile(r"\b(?:the|this) (?:writer|user|author|journaler|person)\b", re.I)
_DIAGNOSIS = re.compile(
    r"\b(?:depression|depressive|disorder|diagnos\w*|syndrome|ptsd|adhd|ocd|bipolar|"
    r"narcissis\w*|codependen\w*|borderline|clinical(?:ly)?|symptoms?|pathological|"
    r"trauma(?:tised|tized)?|anxiety attacks?|panic disorder|psychosis|autis\w*)\b",
    re.I,
)
_ADVICE = re.compile(
    r"\b(?:you should|you shouldn't|you must|you need to|you ought|you could try|"
    r"consider (?:talking|trying|seeing|speaking|writing|asking)|i recommend|i suggest|"
    r"it's important to|it is important to|make sure|try (?:talking|writing|asking|to let)|"
    r"(?:talk to|see) (?:a|your) (?:therapist|doctor|counsellor|counselor|professional|gp)|"
    r"seek (?:help|support|professional)|reach out (?:for help|to someone)|why not|"
    r"remember to|don't forget)\b",
    re.I,
)
_REPORTED = re.compile(
    r"\b(?:feel|feels|felt|think|thought|believe|believed|tell yourself|sure|as if|like)\s+"
    r"(?:that\s+)?$"
)
_IMPERATIVE = re.compile(
    r"^(?:try|consider|remember|take|stop|go|let yourself|allow|talk|set)\b", re.I
)
# People a crux may name without a capital letter: named with a determiner ("your sister",
# "her boss"), they must be in the entry too.
_PEOPLE = (
    "mother|father|mum|mom|dad|mam|brother|sister|wife|husband|partner|boyfriend|girlfriend|"
    "son|daughter|grandmother|grandfather|grandma|grandad|granddad|nan|aunt|uncle|cousin|"
    "boss|manager|colleague|friend|neighbour|neighbor|teacher|coach|doctor|therapist|"
    "fiancé|fiance|fiancée|ex"
)
_PERSON = re.compile(rf"\b(?:your|his|her|their|the|my)\s+((?:{_PEOPLE})s?)\b", re.I)
_CAPITALISED = re.compile(r"[A-Z][\w'’-]*")
_POSSESSIVE = re.compile(r"(?:'s|’s|'|’)$")
_SENTENCE_START = re.compile(r"(?:^|[.!?:;]\s+|[\"“‘'(]\s*)$")
# Words that start a sentence without being names (beside any word the entry writes in lower
# case): function words, common openers, and "you" in every form.
_OPENERS = (
    "a about after again all although always an and another any as at because before between "
    "both but by despite during ever everyone never nobody someone sometimes "
    "each even every for from he her here his how i if in instead it its just last maybe "
    "more most much no not now of on once one only or other since she so some still such "
    "than that the their then there these they this those though to too two until what "
    "whatever when whenever where whether which while who why with without yet you you'd "
    "you'll you're you've you’d you’ll you’re you’ve your yours yourself"
)
_FUNCTION_WORDS = frozenset(_OPENERS.split())


@dataclass(frozen=True)
class Phrased:
    crux: Composed
    themes: dict[str, Composed]  # secondary themes by archetype
    note: str  # what the reasoning trail says about where the words came from


def enabled() -> bool:
    mode = getattr(settings, "AGENT_CRUX_MODEL", "auto")
    if mode == "auto":
        return any(os.environ.get(name, "").strip() for name in CONFIGURING)
    return bool(mode == "on")


def phrase(
    entry: str,
    top: str,
    secondary: Sequence[str],
    offline: Composed,
    offline_themes: Mapping[str, Composed],
) -> Phrased:
    """The confirmed crux (archetype ``top``) and the secondary themes in the chat model's
    words when it answers and every check passes; the offline composer's otherwise."""
    fallback = Phrased(offline, dict(offline_themes), "crux: offline composer")
    if top not in FRAMES or not enabled():
        return fallback
    keys = [top, *[a for a in secondary if a in FRAMES and a != top]]
    try:
        answer = chat.complete(_prompt(entry, keys), system=SYSTEM, temperature=0.2)
    except chat.ChatError as exc:
        logger.info("crux model: no chat model answered (%s)", type(exc).__name__)
        return _refused(fallback, "no chat model answered")
    try:
        cruxes = parse(answer.text, keys)
    except ValueError as exc:
        logger.info("crux model: %s answer unusable (%s)", answer.provider, exc)
        return _refused(fallback, f"the {answer.provider} answer was unusable ({exc})")
    for composed in cruxes.values():
        found = problems(composed, entry)
        if found:
            logger.info("crux model: %s answer refused (%s)", answer.provider, found[0])
            return _refused(fallback, f"the {answer.provider} answer was refused ({found[0]})")
    note = f"crux: phrased by the chat model ({answer.provider}, {answer.model}), checks passed"
    themes = {k: cruxes.get(k, v) for k, v in offline_themes.items()}
    return Phrased(cruxes[top], themes, note)


def _refused(fallback: Phrased, why: str) -> Phrased:
    return Phrased(fallback.crux, fallback.themes, f"crux: offline composer; {why}")


def _prompt(entry: str, keys: Sequence[str]) -> str:
    themes = "\n".join(f"- {k}: {FRAMES[k]}" for k in keys)
    return (
        f"Journal entry:\n{entry}\n\nThemes, the most likely first:\n{themes}\n\n"
        f"Write a crux for each of these theme keys: {', '.join(keys)}."
    )


def parse(text: str, keys: Sequence[str]) -> dict[str, Composed]:
    """The model's cruxes by theme key; ValueError when the answer is not the JSON asked for
    or leaves out the confirmed theme (``keys[0]``)."""
    out: dict[str, Composed] = {}
    for theme, composed in cruxes(text):
        if isinstance(theme, str) and theme in keys:
            out.setdefault(theme, composed)
    if keys[0] not in out:
        raise ValueError("no crux for the confirmed theme")
    return out


def cruxes(text: str) -> list[tuple[object, Composed]]:
    """The (theme, crux) pairs of a model's answer ``{"cruxes": [{"theme", "text",
    "evidence_spans"}]}``, in its order, themes as the model wrote them; ValueError when the
    answer is not that JSON (fenced or not)."""
    body = re.sub(r"^```(?:json)?|```$", "", text.strip(), flags=re.MULTILINE).strip()
    try:
        data = json.loads(body[body.index("{") : body.rindex("}") + 1])
    except ValueError as exc:
        raise ValueError("not a JSON object") from exc
    items = data.get("cruxes") if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise ValueError("no cruxes list")
    out: list[tuple[object, Composed]] = []
    for item in items:
        if not isinstance(item, dict):
            continue
        spans = item.get("evidence_spans")
        if not isinstance(item.get("text"), str) or not isinstance(spans, list):
            raise ValueError("a crux without text or evidence_spans")
        if not all(isinstance(s, str) for s in spans):
            raise ValueError("evidence_spans that are not strings")
        out.append((item.get("theme"), Composed(item["text"].strip(), [s.strip() for s in spans])))
    return out


def problems(crux: Composed, entry: str) -> list[str]:
    """Why ``crux`` may not be shown for ``entry``; empty when it may."""
    text = crux.text
    out = []
    if not text or len(text.split()) > MAX_WORDS or len(text) > 8 * MAX_WORDS:
        out.append(f"empty or longer than {MAX_WORDS} words")
    if not crux.spans or len(crux.spans) > MAX_SPANS:
        out.append("no evidence span" if not crux.spans else "too many evidence spans")
    for span in crux.spans:
        if span not in entry:
            out.append("an evidence span not verbatim in the entry")
        elif not MIN_SPAN_WORDS <= len(span.split()) <= MAX_SPAN_WORDS:
            out.append("an evidence span too short or too long")
    if not _SECOND_PERSON.search(text) or _THIRD_PERSON.search(text):
        out.append("not in the second person")
    names = invented(text, entry)
    if names:
        out.append("invented name: " + ", ".join(names[:3]))
    if _new_terms(_DIAGNOSIS, text, entry):
        out.append("diagnosis")
    if _advice(text):
        out.append("advice")
    return out


def _advice(text: str) -> bool:
    """Whether ``text`` tells the writer what to do ("you should ...", "try ..."), as opposed to
    saying what they feel they must do ("you feel you must keep earning it")."""
    if _IMPERATIVE.search(text.lstrip("\"'“‘ ")):
        return True
    for match in _ADVICE.finditer(text):
        before = text[max(0, match.start() - 30) : match.start()].lower()
        if not _REPORTED.search(before):
            return True
    return False


def _new_terms(pattern: re.Pattern[str], text: str, entry: str) -> list[str]:
    """Matches of ``pattern`` in ``text`` that are not the entry's own words."""
    own = {m.group(0).lower() for m in pattern.finditer(entry)}
    return [m.group(0) for m in pattern.finditer(text) if m.group(0).lower() not in own]


def invented(text: str, entry: str) -> list[str]:
    """Names in ``text`` the entry never uses: capitalised words the entry never writes, in any
    case (a sentence's first word only when it is not a common opener), and the people a crux
    may name in lower case ("your sister", "her boss")."""
    lowered = entry.lower()
    out = []
    for match in _CAPITALISED.finditer(text):
        word = _POSSESSIVE.sub("", match.group(0))
        parts = [p for p in re.split(r"[-‐]", word) if p]
        if word == "I" or all(re.search(rf"\b{re.escape(p)}\b", entry, re.I) for p in parts):
            continue  # the entry names it (in any case: some writers write names in lower case)
        starts = bool(_SENTENCE_START.search(text[: match.start()]))
        if starts and (word.lower() in _FUNCTION_WORDS or word.lower().endswith("ing")):
            continue  # a sentence's opener ("Since ...", "Losing ...")
        out.append(word)
    own = {w.rstrip("s") for w in re.findall(rf"\b(?:{_PEOPLE})s?\b", lowered)}
    out += [m.group(1) for m in _PERSON.finditer(text) if m.group(1).lower().rstrip("s") not in own]
    return out
