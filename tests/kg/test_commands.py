"""kg_extract, kg_moderate and the on-commit extraction task."""

from __future__ import annotations

from datetime import UTC, datetime
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from kg.models import EdgeCandidate, Entity, EntityCandidate
from tests.kg.factories import EntityCandidateFactory, ThoughtFactory
from thoughts.models import Thought
from thoughts.services import thought_extract_on_commit

pytestmark = pytest.mark.django_db


def run(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_kg_extract_stages_and_summarises_by_provider():
    ThoughtFactory(content="FastAPI uses Pydantic.", origin="human")
    ThoughtFactory(content="Kibana reads logs from Elasticsearch.", origin="inner_voice")
    out, err = run("kg_extract")
    assert "Extracted 2 of 2 thought(s)." in out
    assert "heuristic: 2 thought(s), 4 entities, 2 edges, staged 4 entities and 2 edges" in out
    assert "kg_extract" in err  # the progress bar
    assert EntityCandidate.objects.count() == 4


def test_kg_extract_dry_run_writes_nothing_and_filters_apply():
    ThoughtFactory(content="FastAPI uses Pydantic.", origin="human")
    wanted = ThoughtFactory(content="cart-service -> session-store", origin="inner_voice")
    out, _ = run("kg_extract", "--dry-run", "--origin", "inner_voice")
    assert "Extracted 1 of 1 thought(s) (dry run: nothing written)." in out
    assert EntityCandidate.objects.count() == 0
    run("kg_extract", "--thought", str(wanted.id), "--since", "2000-01-01", "--limit", "5")
    assert EdgeCandidate.objects.get().staged_by_thought_id == wanted.id


def test_kg_extract_rejects_bad_arguments():
    with pytest.raises(CommandError, match="--since"):
        run("kg_extract", "--since", "yesterday")
    with pytest.raises(CommandError, match="--thought"):
        run("kg_extract", "--thought", "not-a-uuid")
    for impossible in ("2025-02-30", "2025-02-30T10:00:00"):  # well-formed, no such day
        with pytest.raises(CommandError, match="not a valid date"):
            run("kg_extract", "--since", impossible)
    with pytest.raises(CommandError, match="out of range once converted to UTC"):
        run("kg_extract", "--since", "0001-01-01T00:00:00+05:00")  # before year 1 in UTC


def test_kg_extract_since_takes_any_iso_offset():
    """ISO 8601 allows offsets up to 23:59, Postgres only to 15:59: the bound goes in UTC."""
    thought = ThoughtFactory(content="Ada met Babbage.")
    noon = datetime(2026, 1, 2, 12, tzinfo=UTC)  # created_at is auto_now_add: set it after
    Thought.objects.filter(pk=thought.pk).update(created_at=noon)
    # 2026-01-01T18:00-19:00 is 2026-01-02T13:00Z, after the thought; 16:00-19:00 is 11:00Z.
    out, _ = run("kg_extract", "--dry-run", "--since", "2026-01-01T18:00:00-19:00")
    assert "Extracted 0 of 0" in out
    out, _ = run("kg_extract", "--dry-run", "--since", "2026-01-01T16:00:00-19:00")
    assert "Extracted 1 of 1" in out


def test_kg_moderate_list_approve_reject(moderator):
    keep = EntityCandidateFactory(name="Redis", confidence=0.9)
    drop = EntityCandidateFactory(name="The", confidence=0.3)
    out, _ = run("kg_moderate", "list", "--target", "entity")
    assert "2 candidate(s)" in out and f"entity {keep.pk}: Redis" in out
    out, _ = run("kg_moderate", "approve", "--min-conf", "0.5", "--dry-run")
    assert "dry run: created entity" in out and Entity.objects.count() == 0
    run("kg_moderate", "approve", "--min-conf", "0.5", "--user", moderator.username, "--no-input")
    run("kg_moderate", "reject", "--ids", str(drop.pk), "--note", "noise", "--user", "mod")
    keep.refresh_from_db()
    drop.refresh_from_db()
    assert (keep.status, keep.reviewed_by) == ("approved", moderator)
    assert (drop.status, drop.review_note) == ("rejected", "noise")


def test_kg_moderate_refuses_non_moderators(user):
    EntityCandidateFactory()
    with pytest.raises(CommandError, match="not a KG moderator"):
        run("kg_moderate", "approve", "--user", user.username)


def test_thought_extraction_runs_as_a_task_on_commit(django_capture_on_commit_callbacks):
    thought = ThoughtFactory(content="dream_buffer stages_to memories_review", origin="inner_voice")
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        assert thought_extract_on_commit(thought_id=thought.id) is not None
    assert EntityCandidate.objects.count() == 0  # nothing before commit
    for callback in callbacks:
        callback()
    edge = EdgeCandidate.objects.get()
    assert (edge.source_name, edge.rel_type, edge.target_name) == (
        "dream_buffer",
        "stages_to",
        "memories_review",
    )
    assert edge.origin == "inner_voice" and edge.staged_by_thought_id == thought.id


def test_auto_extract_can_be_turned_off(settings):
    settings.KG_AUTO_EXTRACT = False
    assert thought_extract_on_commit(thought_id="00000000-0000-0000-0000-000000000000") is None


def test_kg_moderate_ids_reach_past_the_first_page(moderator):
    # --ids used to pick only among the page --limit/--offset selected: a later id was skipped
    # silently ("0 of 0 candidate(s)").
    candidates = [EntityCandidateFactory(name=f"name {i}") for i in range(3)]
    oldest = candidates[0]
    out, _ = run(
        "kg_moderate", "reject", "--target", "entity", "--ids", str(oldest.pk), "--limit", "1",
        "--user", moderator.username,
    )  # fmt: skip
    assert "reject: 1 of 1 candidate(s)" in out
    oldest.refresh_from_db()
    assert oldest.status == "rejected"
    assert EntityCandidate.objects.filter(status="pending").count() == 2


def test_kg_moderate_names_ids_it_cannot_find(moderator):
    cand = EntityCandidateFactory()
    with pytest.raises(CommandError, match=r"--ids not found among entity candidates .*: 999999"):
        ids = f"{cand.pk},999999"
        run("kg_moderate", "approve", "--target", "entity", "--user", "mod", "--ids", ids)
    cand.refresh_from_db()
    assert cand.status == "pending"  # nothing decided when one id is wrong
    with pytest.raises(CommandError, match="positive"):
        run("kg_moderate", "approve", "--ids", "99999999999999999999", "--user", "mod")


def test_kg_moderate_refuses_an_offset_past_the_bound():
    with pytest.raises(CommandError, match="--offset"):
        run("kg_moderate", "list", "--offset", "99999999999999999999")
