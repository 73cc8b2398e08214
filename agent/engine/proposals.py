"""The hypotheses proposed by the configured chat model at the first turn, validated, with the
offline seeds as the fallback (issue 32).

When a chat model is configured (``AGENT_CRUX_MODEL``, as for the final crux: see
agent/engine/phrasing.py), the first turn asks it once for two to four candidate cruxes of the
entry. Each names one of the catalogue's archetypes as its frame, speaks to the writer in the
second person and cites the entry's sentences it rests on. A proposal is kept only when:

- its archetype is one of the catalogue's and no earlier proposal took it;
- it passes every check the final crux passes (:func:`agent.engine.phrasing.problems`: spans
  verbatim in the entry, second person, no invented name, no diagnosis, no advice, length);
- the question linter would show it as an option (no loaded word or label the entry does not
  use), and it does not read the same as an earlier proposal.

The kept ones seed the belief graph (at most ``beliefs.SEEDS``, the model's order), and the
offline seeds fill the places left. The archetype still drives the prior, the answer model and
every belief update; the proposal is only what the writer reads, as the option and, confirmed,
as the crux with its cited spans. A proposal travels in the signed state on its node
(``CruxNode.proposal``), so no later turn asks the model again: the final crux is the confirmed
node's proposal or the offline composer's, never a second call.

No model answer, a timeout, an answer that is not the JSON asked for, or no proposal passing the
checks: the offline seeds, as without a model. The seeding evidence records what happened (the
reasoning trail shows it); the entry goes to the model the operator chose and is never logged.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pydantic import ValidationError

from agent.engine.beliefs import SEEDS, seed_nodes
from agent.engine.compose import FRAMES, Composed
from agent.engine.compose import options as compose_options
from agent.engine.phrasing import cruxes, enabled, problems
from agent.engine.questions import NOT_SURE, lint
from agent.schemas import AgentState, CruxNode, ProposedCrux
from legacymind.providers import chat

logger = logging.getLogger("agent.crux")
WORDING = "wording"  # the seeding evidence's key for the note on where the words came from
OFFLINE = "hypotheses: offline composer"

SYSTEM = (
    "You help a person find the crux of their own journal entry: what sits underneath what "
    "they wrote. Propose two to four different candidate cruxes, the most likely first. Frame "
    "each by one theme key from the list given, a different key for each. Write each as one "
    "sentence to the writer, in the second person ('you'), at most 30 words, that names the "
    "entry's own people, events and actions and nothing the entry does not name. No "
    "diagnosis, no labels of disorders, no advice, no questions. Cite the sentence or "
    "sentences of the entry each rests on (one to three), copied exactly, character for "
    "character. Answer with ONE JSON object only: "
    '{"cruxes": [{"theme": "<key>", "text": "<sentence>", "evidence_spans": ["<exact '
    'words of the entry>"]}]}'
)


@dataclass(frozen=True)
class Proposals:
    kept: dict[str, Composed]  # archetype → the model's crux, in the model's order
    note: str  # for the reasoning trail: where the hypotheses' words came from, and why


def propose(entry: str) -> Proposals:
    """The chat model's proposals for ``entry`` that pass every check (none when it did not
    answer, its answer was not the JSON asked for, or every proposal was refused)."""
    try:
        answer = chat.complete(_prompt(entry), system=SYSTEM, temperature=0.2)
    except chat.ChatError as exc:
        logger.info("crux proposals: no chat model answered (%s)", type(exc).__name__)
        return Proposals({}, f"{OFFLINE}; no chat model answered")
    try:
        items = cruxes(answer.text)
    except ValueError as exc:
        logger.info("crux proposals: %s answer unusable (%s)", answer.provider, exc)
        return Proposals({}, f"{OFFLINE}; the {answer.provider} answer was unusable ({exc})")
    kept: dict[str, Composed] = {}
    refused: list[str] = []
    for theme, composed in items:
        why = refusal(theme, composed, entry, kept)
        if why:
            refused.append(why)
        elif len(kept) < SEEDS:
            kept[str(theme)] = composed
    if refused:
        logger.info("crux proposals: %s refused %d (%s)", answer.provider, len(refused), refused[0])
    if not kept:
        why = refused[0] if refused else "no proposal"
        return Proposals({}, f"{OFFLINE}; the {answer.provider} answer was refused ({why})")
    note = (
        f"hypotheses: proposed by the chat model ({answer.provider}, {answer.model}), "
        f"{len(kept)} passed the checks"
    )
    if refused:
        note += f", {len(refused)} refused ({refused[0]})"
    return Proposals(kept, note)


def refusal(theme: object, crux: Composed, entry: str, kept: Mapping[str, Composed]) -> str:
    """Why the proposal ``crux`` framed by ``theme`` may not seed a hypothesis for ``entry``
    beside the ``kept`` ones; empty when it may."""
    if not isinstance(theme, str) or theme not in FRAMES:
        return "a theme outside the catalogue"
    if theme in kept:
        return "a theme proposed twice"
    found = problems(crux, entry)
    if found:
        return found[0]
    leading = lint("", [crux.text, NOT_SURE], quoting=entry)
    if not leading.ok:
        return "leading wording (" + ", ".join(leading.problems) + ")"
    if any(crux.text.lower() == k.text.lower() for k in kept.values()):
        return "the same crux twice"
    try:
        ProposedCrux(text=crux.text, evidence_spans=crux.spans)
    except ValidationError:
        return "too long for the state"
    return ""


def _prompt(entry: str) -> str:
    themes = "\n".join(f"- {k}: {frame}" for k, frame in FRAMES.items())
    return (
        f"Journal entry:\n{entry}\n\nTheme keys, each with the kind of knot it frames:\n"
        f"{themes}\n\nPropose two to four cruxes of this entry, each framed by a different key."
    )


def seed_hypotheses(entry: str) -> tuple[list[CruxNode], str | None]:
    """The first turn's hypotheses and the note on their words: the offline seeds and None
    when no chat model is configured; the model's kept proposals first, the offline seeds in
    the places left, otherwise."""
    if not enabled():
        return seed_nodes(entry), None
    proposed = propose(entry)
    offline = seed_nodes(entry)
    if not proposed.kept:
        return offline, proposed.note
    chosen = [*proposed.kept, *(n.archetype for n in offline if n.archetype not in proposed.kept)]
    nodes = seed_nodes(entry, chosen[:SEEDS])
    for node in nodes:
        composed = proposed.kept.get(node.archetype)
        if composed is not None:
            node.proposal = ProposedCrux(text=composed.text, evidence_spans=composed.spans)
    filled = [n.archetype for n in nodes if n.proposal is None]
    note = proposed.note + (f"; offline seeds beside them: {', '.join(filled)}" if filled else "")
    return nodes, note


def noted(state: AgentState) -> str | None:
    """The note the first turn recorded on the hypotheses' words; None when no chat model was
    configured then (the final crux may then be phrased by one: agent/engine/phrasing.py)."""
    for evidence in state.evidence_log:
        if evidence.payload.get("action_type") == "Seed":
            note = evidence.payload.get(WORDING)
            return note if isinstance(note, str) else None
    return None


def proposed(node: CruxNode) -> Composed | None:
    """The node's crux in the chat model's words, when it has one."""
    if node.proposal is None:
        return None
    return Composed(node.proposal.text, list(node.proposal.evidence_spans))


def options(entry: str, nodes: Sequence[CruxNode]) -> list[str] | None:
    """The quick options in the entry's terms for ``nodes``, in order: a node's proposal, or
    the offline composer's crux (compose.options, which also says None when a node has none)."""
    if not any(n.proposal for n in nodes):
        return compose_options(entry, [n.archetype for n in nodes])
    out = []
    for node in nodes:
        if node.proposal is not None:
            out.append(node.proposal.text)
            continue
        offline = compose_options(entry, [node.archetype])
        if offline is None:
            return None
        out.extend(offline)
    return out


def final_note(top: CruxNode, wording: str) -> str:
    """The reasoning trail's last line when the first turn asked the model (``wording``, its
    note): whose words the confirmed crux is in."""
    if top.proposal is not None:
        return "crux: the chat model's hypothesis, checked at the first turn"
    if wording.startswith(OFFLINE):
        return "crux: offline composer" + wording.removeprefix(OFFLINE)
    return "crux: offline composer (the chat model proposed no crux for this hypothesis)"
