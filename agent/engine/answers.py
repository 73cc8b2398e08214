"""Answer model of a quick-option question: P(option | hypothesis), including "not sure / something
else", from how close each option reads to the hypothesis' crux statement.

A writer whose crux is h picks among the offered options by how well each says h: a softmax over
the cosine between h's statement and each option (inverse temperature ``AGENT_ANSWER_BETA``).
They say "not sure" more often when the two best options say h about equally well:
P(not sure) = sigmoid(bias - slope · gap), gap = cosine of the best option - of the runner-up.

Why not a flat table ("a targeted hypothesis picks its own option 80% of the time"): answers are
not independent coin flips. A writer whose crux is loneliness, asked grief vs uncertainty, picks
grief — every time. A flat table reads that as evidence for grief, twice as strong on the second
such answer, and reports 0.9 for a wrong crux. Here, grief and loneliness both explain the answer,
so it moves little mass between them; the latent "something else" stands for the archetypes that
are not in the graph and answers like their average.

The three parameters were fitted by maximum likelihood to the simulated writer's answers on the
old 36-item dev set. They describe answer noise, not any entry, so they are settings, not code.
``bench/crux.py --fit-answers`` refits them on the train writers' plays: the fit flattens the
model (the writer picks the option of its labelled archetype little more often than chance,
yet its picks still lead to the right crux), the agent then stops asking and loses accuracy,
so the old values stay (docs/benchmarks.md, the crux section).

Two refinements, both about the writer rather than any entry:

- "Not sure" with more than two options: the writer is unsure when *any* other option reads about
  as close as the best one, so P(not sure) = 1 - prod_j (1 - sigmoid(bias - slope · gap_j)) over
  the gaps to every other option. With two options this is the formula above; with three the
  third option adds its own chance of a near-tie (the simulated writer said "not sure" to 35% of
  first triads in the bench, the two-option formula predicted 20%, this one 31%; over every
  triad that contains the writer's own archetype it over-predicts instead, 21% vs 12%: the
  triads the agent asks are of salient, confusable seeds, not random ones).
- Answers of one writer are not independent given the hypothesis. The writer's own crux sits
  somewhere near their archetype's statement, sometimes nearer a neighbour's: a writer whose crux
  is control-and-uncertainty may read every question the way a boundaries writer would, every
  time. So each hypothesis answers as a mixture of "personas", the catalogue's statements,
  with prior weights softmax(AGENT_PERSONA_BETA · cosine(statement, persona statement)), and the
  weights are updated by the answers given so far (each answer stores P(answer | persona) in its
  evidence). The first answer of a session moves belief about as before; a second answer in the
  same direction moves it less when a neighbour explains both as well. ``AGENT_PERSONA_BETA`` is
  set so that a single two-option answer picks the neighbour's option as often as the simulated
  writer does (P(rival option | own archetype) 0.035 vs 0.033 measured over every pair on the
  dev set), which is a fit to that set like the three above; docs/benchmarks.md has the figures
  at 8.3 and 16 as well.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from functools import lru_cache

import numpy as np
from django.conf import settings

from agent.engine.archetypes import ARCHETYPES, BY_KEY
from agent.engine.beliefs import OTHER, embed
from agent.schemas import CruxHypothesis, CruxNode
from legacymind.providers.embeddings import get_provider


def statement(node: CruxNode | CruxHypothesis) -> str:
    """What a hypothesis claims, independent of how the entry words it: the archetype's crux, or
    the node's own text when it came from the writer's words."""
    return BY_KEY[node.archetype].crux if node.archetype in BY_KEY else node.text


def latent_statements(present: Sequence[str]) -> list[str]:
    """The crux statements the latent "something else" stands for: archetypes not in the graph."""
    return [a.crux for a in ARCHETYPES if a.key not in set(present)]


CATALOGUE = [a.crux for a in ARCHETYPES]  # the personas, in catalogue order
CATALOGUE_INDEX = {crux: i for i, crux in enumerate(CATALOGUE)}


def answer_rows(statements: Sequence[str], options: Sequence[str]) -> np.ndarray:
    """P(option | statement) for each statement: ``len(options)`` substantive columns, then
    "not sure / something else"."""
    sims = embed(statements) @ embed(options).T  # (hypotheses, options)
    return answer_probs(
        sims,
        beta=settings.AGENT_ANSWER_BETA,
        lapse=settings.AGENT_ANSWER_LAPSE,
        bias=settings.AGENT_UNSURE_BIAS,
        slope=settings.AGENT_UNSURE_SLOPE,
    )


def answer_probs(
    sims: np.ndarray, *, beta: float, lapse: float, bias: float, slope: float
) -> np.ndarray:
    """``answer_rows`` from the cosines (hypotheses by options) and explicit parameters: the
    engine passes its settings, bench/crux.py --fit-answers candidate values."""
    weights = np.exp(beta * (sims - sims.max(axis=1, keepdims=True)))
    choice = weights / weights.sum(axis=1, keepdims=True)
    choice = (1.0 - lapse) * choice + lapse / sims.shape[1]
    if sims.shape[1] > 1:
        ordered = np.sort(sims, axis=1)[:, ::-1]
        gaps = ordered[:, :1] - ordered[:, 1:]  # best minus every other option
        tie = 1.0 / (1.0 + np.exp(-(bias - slope * gaps)))
        unsure = 1.0 - np.prod(1.0 - tie, axis=1)
    else:
        unsure = np.full(len(sims), 1.0 / (1.0 + np.exp(-(bias - slope))))
    return np.hstack([choice * (1.0 - unsure)[:, None], unsure[:, None]])


def persona_weights(sims: np.ndarray, beta: float) -> np.ndarray:
    """Row-wise softmax(beta · cosine) over the personas: the persona prior of each row."""
    weights = np.exp(beta * (sims - sims.max(axis=1, keepdims=True)))
    return weights / weights.sum(axis=1, keepdims=True)


@lru_cache(maxsize=8)
def _catalogue_priors(model: str, beta: float) -> np.ndarray:
    """Persona priors of every catalogue statement (rows), per embedding model and spread."""
    catalogue = embed(CATALOGUE)
    return persona_weights(catalogue @ catalogue.T, beta)


def persona_prior(statement_text: str) -> np.ndarray:
    """P(the writer answers like catalogue statement k | their crux is the catalogue statement
    ``statement_text``). A statement in the writer's own words has no persona mixture: it
    answers as itself (``answer_table``)."""
    priors = _catalogue_priors(get_provider().model, settings.AGENT_PERSONA_BETA)
    return priors[CATALOGUE_INDEX[statement_text]]


def persona_likelihoods(options: Sequence[str], index: int) -> list[float]:
    """P(the answer at ``index`` | persona) for every catalogue statement: what an answer's
    evidence stores so later questions can condition on it."""
    return [round(float(x), 6) for x in answer_rows(CATALOGUE, options)[:, index]]


def answer_table(
    statements: Mapping[str, str],
    options: Sequence[str],
    *,
    latent: Sequence[str] = (),
    history: Sequence[Sequence[float]] = (),
) -> dict[str, list[float]]:
    """P(option | h, earlier answers) for every hypothesis id in ``statements`` and, when
    ``latent`` (catalogue statements: ``latent_statements``) is given, for OTHER as their
    mixture. ``options`` are the substantive quick options (targets in order); each row has one
    more column for "not sure".
    ``history`` holds P(answer | persona) of each earlier answer of this writer (catalogue order).

    A catalogue statement answers as its persona mixture, weighted by how well each persona
    explains the earlier answers; a statement in the writer's own words answers as itself."""
    persona_rows = answer_rows(CATALOGUE, options)
    evidence = np.ones(len(ARCHETYPES))
    for answered in history:
        evidence = evidence * np.asarray(answered, dtype=float)

    def mixture(prior: np.ndarray) -> list[float]:
        weights = prior * evidence
        total = weights.sum()
        weights = weights / total if total > 0 else prior
        return [float(x) for x in weights @ persona_rows]

    table = {}
    for h, text in statements.items():
        if text in CATALOGUE_INDEX:
            table[h] = mixture(persona_prior(text))
        else:
            table[h] = [float(x) for x in answer_rows([text], options)[0]]
    if latent:
        table[OTHER] = mixture(np.mean([persona_prior(t) for t in latent], axis=0))
    elif statements:
        n = len(options)
        table[OTHER] = [0.7 / n] * n + [0.3]  # nothing latent: an even pick or "not sure"
    return {h: floor(row) for h, row in table.items()}


# How a writer answers when the options are the cruxes themselves (compose.options): they pick
# the crux that is theirs, another, or "not sure". Rates measured on the train writers' entries
# (tests/agent/fixtures/crux/writer_01..04) with the simulated writer of bench/crux.py, on
# questions between a right and a wrong crux: a triad picked the right one 66%, a wrong one 12%,
# "not sure" 22%; a pair 76%, 13%, 11%. A writer whose crux is another seed's, not offered,
# picks the offered crux nearest theirs, at random as far as the agent can tell, and is as often
# unsure: "not sure" is no evidence among the seeds. A writer whose crux is none of them (OTHER)
# is unsure more often (assumed, not measured): so "not sure" moves mass to the latent, which
# can spawn new hypotheses.
PICK_OWN = {2: 0.76, 3: 0.66}
PICK_UNSURE = {2: 0.11, 3: 0.22}
OTHER_UNSURE = 0.5


def pick_table(hypotheses: Sequence[str], targets: Sequence[str]) -> dict[str, list[float]]:
    """P(option | h) for a question whose options are the ``targets``' own cruxes, in order,
    then "not sure", for every id in ``hypotheses`` and OTHER: a writer recognises their crux
    among the options, whatever archetype frames it."""
    k = len(targets)
    own = PICK_OWN.get(k, PICK_OWN[3])
    unsure = PICK_UNSURE.get(k, PICK_UNSURE[3])
    rival = (1.0 - own - unsure) / max(1, k - 1)
    table = {}
    for h in [*hypotheses, OTHER]:
        if h in targets:
            table[h] = [own if t == h else rival for t in targets] + [unsure]
        else:
            away = OTHER_UNSURE if h == OTHER else unsure
            table[h] = [(1.0 - away) / k] * k + [away]
    return {h: floor(row) for h, row in table.items()}


def floor(row: list[float]) -> list[float]:
    """No answer is impossible under any hypothesis: a misclick must not zero a belief."""
    floored = [max(p, 1e-3) for p in row]
    total = math.fsum(floored)
    return [p / total for p in floored]
