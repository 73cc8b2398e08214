"""Inner-voice retrieval: privacy across users, the floor, the KG share, duplicates, citations."""

from __future__ import annotations

import pytest

from innervoice.retrieval import snippets_select
from tests.innervoice.conftest import QUERY, ask, entity_at, observation_at, thought_at
from tests.thoughts.conftest import text_vector
from thoughts.models import Thought

pytestmark = pytest.mark.django_db


def select(user, **kwargs):
    params = {
        "top_k": 10,
        "floor": 0.3,
        "mix": 0.6,
        "include_private": False,
        "include_tags": [],
        "exclude_tags": [],
        **kwargs,
    }
    return snippets_select(
        user=user,
        vector=[float(x) for x in text_vector(QUERY)],
        model="feature-hash-384",
        **params,
    )


def refs(selection) -> set[str]:
    return {s.ref for s in selection.snippets}


def test_another_users_thoughts_and_private_memories_are_never_sources(
    api, user, other_user, voice
):
    theirs_private = thought_at(
        other_user, 0.95, 1, content="Bob's secret payroll plan.", is_private=True
    )
    theirs_public = thought_at(other_user, 0.95, 2, content="Bob's public note on billing.")
    hidden = entity_at(0.95, 3, name="Bob Secret", source_thought=theirs_private)
    shared = entity_at(0.6, 4, name="Postgres")
    for include_private in (False, True):
        found = refs(select(user, include_private=include_private))
        assert f"thoughts:{theirs_private.id}" not in found
        assert f"thoughts:{theirs_public.id}" not in found
        assert f"kge:{hidden.id}" not in found
        assert f"kge:{shared.id}" in found
    response = ask(api, include_private=True)
    assert response.status_code == 201
    assert "secret payroll" not in str(voice.requests) and "Bob Secret" not in str(voice.requests)


def test_own_private_thought_only_with_include_private_and_then_outputs_are_private(
    api, user, voice
):
    mine = thought_at(user, 0.9, 5, content="My private worry about Postgres.", is_private=True)
    drawn = entity_at(0.9, 6, name="Private Worry", source_thought=mine)
    public = ask(api).json()
    assert f"thoughts:{mine.id}" not in public["sources_compact"]
    assert f"kge:{drawn.id}" not in public["sources_compact"]
    assert not Thought.objects.filter(origin__startswith="inner_voice", is_private=True).exists()
    assert "private worry" not in str(voice.requests).lower()

    private = ask(api, include_private=True).json()
    assert f"thoughts:{mine.id}" in private["sources_compact"]
    assert f"kge:{drawn.id}" in private["sources_compact"]
    for ref in (private["synth_thought_id"], private["feedback_thought_id"]):
        assert Thought.objects.get(id=ref.removeprefix("thoughts:")).is_private


def test_private_output_stays_out_of_a_later_public_calls_history(api, user, voice):
    thought_at(user, 0.9, 7, content="My private worry about Postgres.", is_private=True)
    first = ask(api, include_private=True).json()
    voice.requests.clear()
    second = ask(api, thread_id=first["thread"]["id"]).json()
    assert second["thread"]["position"] == 2
    prompts = [str(r["body"]) for r in voice.requests]
    assert not any("You synthesised" in p for p in prompts)  # the private exchange is left out
    assert not Thought.objects.get(id=second["synth_thought_id"][9:]).is_private


def test_floor_is_lowered_in_steps_but_never_below_015(user):
    near = thought_at(user, 0.32, 8)
    far = thought_at(user, 0.10, 9)
    selection = select(user, top_k=2, floor=0.5)
    assert selection.floor == pytest.approx(0.15)
    assert refs(selection) == {f"thoughts:{near.id}"}
    assert f"thoughts:{far.id}" not in refs(selection)

    enough = select(user, top_k=1, floor=0.5)
    assert enough.floor == pytest.approx(0.30)  # 0.5 -> 0.45 -> 0.40 -> 0.35 -> 0.30
    assert refs(enough) == {f"thoughts:{near.id}"}


def test_floor_is_kept_when_enough_rows_pass(user):
    thought_at(user, 0.9, 10)
    low = thought_at(user, 0.4, 11)
    selection = select(user, top_k=1, floor=0.5)
    assert selection.floor == 0.5 and f"thoughts:{low.id}" not in refs(selection)


def test_kg_gets_round_mix_times_top_k_slots_with_one_per_source(user):
    for i in range(6):
        thought_at(user, 0.9 - i * 0.01, 20 + i, content=f"Thought {i} words {i * 7}")
        entity_at(0.8 - i * 0.01, 40 + i, name=f"Entity {i}")
    observation_at(0.5, 60, name="Observation", description="slow queries")
    selection = select(user, top_k=5, mix=0.6)
    kinds = [s.kind for s in selection.snippets]
    assert len(kinds) == 5
    assert kinds.count("thought") == 2
    assert kinds.count("entity") == 2 and kinds.count("observation") == 1

    no_kg = [s.kind for s in select(user, top_k=5, mix=0.0).snippets]
    assert {"thought", "entity", "observation"} == set(no_kg)  # at least one per source
    all_kg = [s.kind for s in select(user, top_k=5, mix=1.0).snippets]
    assert all_kg.count("thought") == 1 and len(all_kg) == 5


def test_a_side_without_rows_leaves_its_slots_to_the_other(user):
    for i in range(4):
        thought_at(user, 0.9 - i * 0.01, 70 + i, content=f"Alone {i} words {i * 3}")
    assert len(select(user, top_k=4, mix=0.6).snippets) == 4


def test_near_duplicate_snippets_are_dropped_and_snippets_are_capped(user):
    a = thought_at(user, 0.9, 80, content="Billing writes invoices to Postgres nightly.")
    b = thought_at(user, 0.85, 81, content="billing writes invoices to Postgres   nightly!")
    long = thought_at(user, 0.8, 82, content="word " * 400)
    selection = select(user, top_k=10)
    found = refs(selection)
    assert f"thoughts:{a.id}" in found and f"thoughts:{b.id}" not in found
    text = next(s.text for s in selection.snippets if s.id == long.id)
    assert len(text) <= 800


def test_sources_compact_cites_at_most_six_with_prefixes(user):
    for i in range(5):
        thought_at(user, 0.9 - i * 0.01, 90 + i, content=f"Source thought {i} n{i * 11}")
        entity_at(0.8 - i * 0.01, 100 + i, name=f"Source entity {i}")
    observation_at(0.7, 110, name="Source observation", description="x")
    selection = select(user, top_k=10)
    cited = selection.sources_compact.split(", ")
    assert len(selection.snippets) == 10
    assert len(cited) == 6
    assert all(c.split(":")[0] in {"thoughts", "kge", "kgo"} for c in cited)


def test_tags_select_and_exclude_thoughts(user):
    tagged = thought_at(user, 0.9, 120, content="Tagged plan", tags=["plan"])
    other = thought_at(user, 0.9, 121, content="Debug notes", tags=["debug"])
    assert refs(select(user, include_tags=["plan"])) == {f"thoughts:{tagged.id}"}
    assert refs(select(user, exclude_tags=["plan"])) == {f"thoughts:{other.id}"}


def test_the_inner_voices_own_follow_up_questions_are_not_material(user):
    """A feedback thought is a question the inner voice asked, not something the writer knows;
    a synthesis stays material (the dialogue builds on it)."""
    question = thought_at(
        user,
        0.95,
        11,
        content="Which path fails first?",
        origin=Thought.Origin.INNER_VOICE_FEEDBACK,
    )
    synthesis = thought_at(
        user, 0.9, 12, content="Billing leans on Postgres.", origin=Thought.Origin.INNER_VOICE
    )
    found = refs(select(user))
    assert f"thoughts:{question.id}" not in found
    assert f"thoughts:{synthesis.id}" in found
