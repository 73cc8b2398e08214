"""EIG on hand-computed examples, bounded log-odds updates, and the leading-wording linter."""

from __future__ import annotations

import math

import pytest

from agent.engine.answers import answer_table, latent_statements
from agent.engine.archetypes import BY_KEY
from agent.engine.beliefs import OTHER
from agent.engine.infotheory import bounded_update, entropy, expected_information_gain
from agent.engine.questions import NOT_SURE, lint


def test_eig_of_a_symmetric_noisy_binary_question():
    # H([.5,.5]) = 1; H([.8,.2]) = 0.721928; EIG = 0.278072 bits.
    eig = expected_information_gain({"a": 0.5, "b": 0.5}, {"a": [0.8, 0.2], "b": [0.2, 0.8]})
    assert eig == pytest.approx(1 - (-(0.8 * math.log2(0.8) + 0.2 * math.log2(0.2))), abs=1e-9)
    assert eig == pytest.approx(0.278072, abs=1e-6)


def test_eig_with_a_not_sure_column_and_an_untargeted_hypothesis():
    prior = {"a": 0.5, "b": 0.3, "c": 0.2}
    table = {"a": [0.7, 0.1, 0.2], "b": [0.1, 0.7, 0.2], "c": [0.2, 0.2, 0.6]}
    # predictive = [.5*.7+.3*.1+.2*.2, .5*.1+.3*.7+.2*.2, .5*.2+.3*.2+.2*.6] = [.42, .30, .28]
    predictive = [0.42, 0.30, 0.28]
    noise = 0.8 * entropy([0.7, 0.1, 0.2]) + 0.2 * entropy([0.2, 0.2, 0.6])
    expected = entropy(predictive) - noise
    assert expected_information_gain(prior, table) == pytest.approx(expected, abs=1e-12)
    # By hand: H(predictive) = 1.5609, noise = 0.8·1.1568 + 0.2·1.3710 = 1.1996.
    assert expected == pytest.approx(0.3613, abs=1e-3)


def test_dropping_the_noise_term_would_overstate_eig():
    prior = {"a": 0.5, "b": 0.5}
    noisy = {"a": [0.55, 0.45], "b": [0.45, 0.55]}
    assert expected_information_gain(prior, noisy) < 0.01 < entropy([0.5, 0.5])


def test_answer_table_rows_are_distributions_with_a_not_sure_column():
    burnout, boundaries, grief = BY_KEY["burnout"], BY_KEY["boundaries"], BY_KEY["grief_loss"]
    statements = {"a": burnout.crux, "b": boundaries.crux, "c": grief.crux}
    options = [burnout.option, boundaries.option]
    table = answer_table(
        statements, options, latent=latent_statements(["burnout", "boundaries", "grief_loss"])
    )
    assert set(table) == {"a", "b", "c", OTHER}
    for row in table.values():
        assert sum(row) == pytest.approx(1.0)
        assert len(row) == 3
        assert min(row) > 0  # a misclick never zeroes a belief
    # Each targeted hypothesis picks its own option more often than the rival's.
    assert table["a"][0] > table["a"][1]
    assert table["b"][1] > table["b"][0]
    triad = answer_table(statements, [burnout.option, boundaries.option, grief.option])
    assert all(len(r) == 4 and sum(r) == pytest.approx(1.0) for r in triad.values())
    assert triad["c"][2] == max(triad["c"][:3])


def test_bounded_update_limits_step_and_clips():
    prior = {"a": 0.5, "b": 0.5}
    post = bounded_update(prior, {"a": 1000.0, "b": 0.001}, max_step=1.0, clip=5.0)
    # One step moves log-odds of a by at most 1: p ≤ sigmoid(1) before renormalising.
    assert 0.5 < post["a"] < 0.85
    for _ in range(50):
        post = bounded_update(post, {"a": 1000.0, "b": 0.001}, max_step=1.0, clip=2.0)
    assert post["b"] > 0.05  # clipping keeps the loser alive


OPTS = [
    "Trying and still falling short would be unbearable",
    "I need others to approve of what I did",
    NOT_SURE,
]


@pytest.mark.parametrize(
    ("question", "options", "problem"),
    [
        ("Don't you think you are afraid of failing?", OPTS, "negative_interrogative"),
        ("Isn't this really about your mother?", OPTS, "negative_interrogative"),
        ("This is about approval, isn't it?", OPTS, "tag_question"),
        ("You want them to notice, right?", OPTS, "tag_question"),
        ("Why do you always give in to her?", OPTS, "presupposition"),
        ("When did you stop trusting yourself?", OPTS, "presupposition"),
        ("Which feels more like your depression talking?", OPTS, "diagnostic_label"),
        ("Which is closer: codependency or fear?", OPTS, "diagnostic_label"),
        ("Are you afraid of failing?", ["Yes", "No", NOT_SURE], "one_sided_yes_no"),
        (
            "Which is closer?",
            [
                "Fear",
                "I need the people around me to approve of every single thing I do at work",
                NOT_SURE,
            ],
            "unequal_options",
        ),
        (
            "Which is closer?",
            ["Obviously fear of failing", "Needing approval", NOT_SURE],
            "unequal_options",
        ),
    ],
)
def test_linter_rejects_leading_wording(question, options, problem):
    result = lint(question, options)
    assert not result.ok
    assert problem in result.problems


@pytest.mark.parametrize(
    "question",
    [
        "Which of these is closer to what sits underneath this for you?",
        "If you had to pick one, which weighs on you more here?",
    ],
)
def test_linter_accepts_neutral_contrasts(question):
    assert lint(question, OPTS).ok


def test_every_bank_question_passes_the_linter():
    from agent.engine.archetypes import ARCHETYPES
    from agent.engine.questions import PAIR_TEMPLATES, TRIAD_TEMPLATES

    for _, stem in PAIR_TEMPLATES + TRIAD_TEMPLATES:
        for a in ARCHETYPES:
            for b in ARCHETYPES:
                if a is not b:
                    assert lint(stem, [a.option, b.option, NOT_SURE]).ok, (stem, a.key, b.key)


def _silence_candidate(top_origin: str):
    """The SilenceCheck candidate (or None) of a freshly seeded state whose leading node has
    ``top_origin`` (real seeding, beliefs and policy)."""
    import random

    from agent.engine.beliefs import recompute, seed_nodes
    from agent.engine.config import EngineConfig
    from agent.engine.policy import enumerate_and_score
    from agent.schemas import AgentState, BeliefState, JournalEntry
    from tests.agent.conftest import BOUNDARIES_ENTRY

    state = AgentState(
        journal_entry=JournalEntry(text=BOUNDARIES_ENTRY), belief_state=BeliefState()
    )
    state.belief_state.nodes = seed_nodes(BOUNDARIES_ENTRY)
    beliefs = recompute(state)
    top = next(n for n in state.belief_state.nodes if str(n.node_id) == beliefs.ranked()[0])
    assert top.archetype == "boundaries"  # voiced: the entry matches its cues many times
    top.origin = top_origin  # type: ignore[assignment]
    candidates = enumerate_and_score(state, beliefs, random.Random(0), EngineConfig.from_settings())
    internal = ("CounterfactualTest", "EvidenceRequest")
    assert any(c.action.type in internal for c in candidates)  # internal ones exist
    return next((c for c in candidates if c.action.type == "SilenceCheck"), None)


def test_silence_check_does_not_count_a_seeds_cues_twice():
    # A seed's prior already read the entry's cue matches: checking them again is no evidence,
    # so it is not offered.
    assert _silence_candidate("seed") is None
    # A node spawned from the uncovered mass got an even share, not a cue-weighted prior: for
    # it the check is new evidence, and voicing favours it.
    spawned = _silence_candidate("spawn")
    assert spawned is not None and spawned.evi > 0.01
    evidence = spawned.run()
    assert evidence.payload["outcome"] == "voiced"
    likelihoods = evidence.payload["likelihoods"]
    top = evidence.payload["details"]["node"]
    assert likelihoods[top] > max(p for h, p in likelihoods.items() if h != top)


def test_not_sure_counts_a_near_tie_with_any_other_option(settings):
    from agent.engine.answers import answer_rows
    from agent.engine.beliefs import embed

    def sigmoid(x: float) -> float:
        return 1.0 / (1.0 + math.exp(-x))

    crux = BY_KEY["burnout"].crux
    options = [BY_KEY[k].option for k in ("burnout", "boundaries", "grief_loss")]
    sims = sorted((embed(options) @ embed([crux])[0]).tolist(), reverse=True)
    bias, slope = settings.AGENT_UNSURE_BIAS, settings.AGENT_UNSURE_SLOPE
    # Two options: the near-tie of the best and the runner-up.
    pair = answer_rows([crux], options[:2])[0]
    pair_sims = sorted((embed(options[:2]) @ embed([crux])[0]).tolist(), reverse=True)
    assert pair[-1] == pytest.approx(sigmoid(bias - slope * (pair_sims[0] - pair_sims[1])))
    # Three options: unsure when either other option is about as close as the best.
    tie = [sigmoid(bias - slope * (sims[0] - s)) for s in sims[1:]]
    triad = answer_rows([crux], options)[0]
    assert triad[-1] == pytest.approx(1 - (1 - tie[0]) * (1 - tie[1]))
    assert triad[-1] > max(tie)
    assert sum(triad) == pytest.approx(1.0)


def test_a_second_answer_in_the_same_direction_moves_belief_less(settings):
    # Real sentence model: how close statements and options read is the whole point.
    from agent.engine.answers import persona_likelihoods
    from agent.engine.archetypes import ARCHETYPES
    from legacymind.providers import embeddings

    settings.EMBEDDING_PROVIDER = "local"
    embeddings._cached.cache_clear()
    control, boundaries = BY_KEY["control_uncertainty"], BY_KEY["boundaries"]
    statements = {"c": control.crux, "b": boundaries.crux}
    latent = latent_statements(["control_uncertainty", "boundaries"])
    first_options = [control.option, boundaries.option]
    first = answer_table(statements, first_options, latent=latent)
    picked = 1  # the writer picks the boundaries phrase
    history = [persona_likelihoods(first_options, picked)]
    assert len(history[0]) == len(ARCHETYPES)
    # The next question offers the same contrast in other company (a third option).
    second_options = [control.option, boundaries.option, BY_KEY["grief_loss"].option]
    fresh = answer_table(statements, second_options, latent=latent)
    after = answer_table(statements, second_options, latent=latent, history=history)
    for table in (first, fresh, after):
        assert all(sum(row) == pytest.approx(1.0) for row in table.values())
    ratio_first = first["b"][picked] / first["c"][picked]
    ratio_fresh = fresh["b"][picked] / fresh["c"][picked]
    ratio_after = after["b"][picked] / after["c"][picked]
    assert ratio_first > 3  # one answer is real evidence for boundaries
    # After the first boundaries answer, a control writer who answered it is likely one who
    # reads like boundaries: the same answer again is weaker evidence than it would be alone.
    assert ratio_after < ratio_fresh
    # The boundaries hypothesis itself is unchanged by its own answer (it is its own persona).
    assert after["b"][picked] == pytest.approx(fresh["b"][picked], rel=0.05)


@pytest.mark.parametrize("beta", [0.0, 100.0])
def test_persona_spread_comes_from_agent_persona_beta(settings, beta):
    from agent.engine.answers import persona_likelihoods

    settings.AGENT_PERSONA_BETA = beta
    control, boundaries = BY_KEY["control_uncertainty"], BY_KEY["boundaries"]
    statements = {"c": control.crux, "b": boundaries.crux}
    options = [control.option, boundaries.option]
    table = answer_table(statements, options)
    if beta == 0.0:
        # No spread preference: every catalogue hypothesis answers as the same even mixture,
        # so the question tells them apart not at all.
        assert table["c"] == pytest.approx(table["b"])
    else:
        # All weight on its own statement: each hypothesis answers as itself, and an earlier
        # answer changes nothing.
        history = [persona_likelihoods(options, 1)]
        assert table["c"][0] > table["b"][0] and table["b"][1] > table["c"][1]
        after = answer_table(statements, options, history=history)
        assert after["c"] == pytest.approx(table["c"], rel=1e-3)
