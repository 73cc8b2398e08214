"""kg_moderate: ids that name both kinds, confirmation of page-wide decisions, the recorded
reviewer, the alias action and the help text."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from kg.management.commands.kg_moderate import Command
from kg.models import Blocklist, EdgeCandidate, Entity, EntityCandidate
from legacymind.api.pagination import MAX_OFFSET
from tests.kg.factories import (
    EdgeCandidateFactory,
    EntityCandidateFactory,
    EntityFactory,
    ThoughtFactory,
)

pytestmark = pytest.mark.django_db

SHARED_ID = 900_001  # an entity candidate and an edge candidate with the same id


class Terminal(StringIO):
    """Keyboard input as a terminal gives it: the command asks only when stdin is a tty."""

    def isatty(self) -> bool:
        return True


def run(*args: str, stdin: StringIO | None = None) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO(), stdin=stdin or StringIO())
    return out.getvalue()


def statuses() -> list[tuple[str, int, str, int | None]]:
    """Every candidate's decision state, to show that a refused command changed nothing."""
    return [
        (model.__name__, c.pk, c.status, c.reviewed_by_id)
        for model in (EntityCandidate, EdgeCandidate)
        for c in model.objects.order_by("pk")
    ]


@pytest.fixture
def twins():
    entity = EntityCandidateFactory(id=SHARED_ID, name="Redis")
    edge = EdgeCandidateFactory(id=SHARED_ID)
    return entity, edge


@pytest.mark.parametrize("extra", [[], ["--dry-run"]])
def test_an_id_naming_both_kinds_is_refused_and_nothing_is_decided(moderator, twins, extra):
    before = statuses()
    with pytest.raises(CommandError) as exc:
        run("kg_moderate", "reject", "--ids", str(SHARED_ID), "--user", "mod", *extra)
    message = str(exc.value)
    assert "--target entity or --target edge" in message
    assert f"entity {SHARED_ID}: Redis" in message
    assert f"edge {SHARED_ID}: Billing API -[depends_on]-> Postgres" in message
    assert statuses() == before and not Blocklist.objects.exists()
    out = run("kg_moderate", "list", "--ids", str(SHARED_ID))  # listing both is no decision
    assert "2 candidate(s)" in out and f"entity {SHARED_ID}" in out and f"edge {SHARED_ID}" in out


def test_target_picks_the_kind_an_id_names(moderator, twins):
    entity, edge = twins
    out = run("kg_moderate", "reject", "--ids", str(SHARED_ID), "--target", "edge", "--user", "mod")
    assert "reject: 1 of 1 candidate(s)" in out
    entity.refresh_from_db()
    edge.refresh_from_db()
    assert (entity.status, edge.status) == ("pending", "rejected")
    assert list(Blocklist.objects.values_list("kind", flat=True)) == ["edge"]


def test_a_page_wide_decision_is_refused_without_a_terminal_or_no_input(moderator):
    EntityCandidateFactory.create_batch(3)
    before = statuses()
    with pytest.raises(CommandError, match=r"needs confirmation.*--no-input"):
        run("kg_moderate", "reject", "--user", "mod", stdin=StringIO("yes\n"))
    assert statuses() == before and not Blocklist.objects.exists()


def test_a_page_wide_decision_asks_and_stops_unless_told_yes(moderator):
    EntityCandidateFactory.create_batch(2)
    before = statuses()
    out = run("kg_moderate", "reject", "--user", "mod", stdin=Terminal("no\n"))
    assert "This will reject the 2 candidate(s) above" in out and "blocklist" in out
    assert "Type 'yes' to continue" in out and "Cancelled; nothing was decided." in out
    assert statuses() == before and not Blocklist.objects.exists()


def test_a_page_wide_decision_applies_after_yes_with_the_reviewer_recorded(moderator):
    cands = EntityCandidateFactory.create_batch(2)
    out = run("kg_moderate", "reject", "--user", "mod", "--note", "noise", stdin=Terminal("yes\n"))
    assert "reject: 2 of 2 candidate(s)" in out
    for cand in cands:
        cand.refresh_from_db()
        assert (cand.status, cand.reviewed_by, cand.review_note) == ("rejected", moderator, "noise")
    assert Blocklist.objects.count() == 2


def test_no_input_decides_the_page_without_asking(moderator):
    cand = EntityCandidateFactory()
    out = run("kg_moderate", "approve", "--user", "mod", "--no-input", stdin=Terminal(""))
    assert "Type 'yes'" not in out and "approve: 1 of 1 candidate(s)" in out
    cand.refresh_from_db()
    assert (cand.status, cand.reviewed_by) == ("approved", moderator)


def test_a_page_wide_dry_run_neither_asks_nor_writes():
    EntityCandidateFactory.create_batch(2)
    before = statuses()
    out = run("kg_moderate", "reject", "--dry-run")  # no terminal, no --user: still fine
    assert out.count("dry run: rejected") == 2
    assert statuses() == before and not Blocklist.objects.exists()


def test_a_decision_needs_the_reviewer(moderator):
    cand = EntityCandidateFactory()
    with pytest.raises(CommandError, match="needs --user"):
        run("kg_moderate", "approve", "--ids", str(cand.pk))
    cand.refresh_from_db()
    assert cand.status == "pending" and not Entity.objects.exists()


def test_alias_makes_the_candidate_an_alias_of_the_entity(moderator):
    canonical = EntityFactory(name="PostgreSQL")
    cand = EntityCandidateFactory(name="Postgres")
    out = run(
        "kg_moderate", "alias", "--ids", str(cand.pk), "--canonical", str(canonical.pk),
        "--user", "mod", "--note", "same database",
    )  # fmt: skip
    assert "'Postgres' is now an alias of 'PostgreSQL'" in out
    cand.refresh_from_db()
    canonical.refresh_from_db()
    assert (cand.status, cand.promoted_id, cand.reviewed_by) == ("aliased", canonical.pk, moderator)
    assert canonical.aliases == ["Postgres"]


def test_alias_dry_run_writes_nothing(twins):
    # Under mixed an alias id means the entity candidate: edges cannot be aliased.
    canonical = EntityFactory(name="Redis server")
    before = statuses()
    out = run(
        "kg_moderate", "alias", "--ids", str(SHARED_ID), "--canonical", str(canonical.pk),
        "--dry-run",
    )  # fmt: skip
    assert f"ok   entity {SHARED_ID}: dry run: 'Redis' is now an alias" in out
    canonical.refresh_from_db()
    assert statuses() == before and canonical.aliases == []


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["--target", "edge", "--ids", "{edge}", "--canonical", "{entity}"], "--target entity"),
        (["--ids", "{edge}", "--canonical", "{entity}"], "only entity candidates can be aliased"),
        (["--ids", "{cand}"], "alias needs --canonical"),
        (["--canonical", "{entity}"], "alias needs --ids"),
        (["--ids", "{cand}", "--canonical", "{cand}"], "names no entity"),
    ],
)
def test_alias_refuses_what_cannot_be_aliased(moderator, args, error):
    ids = {
        "entity": EntityFactory().pk,
        "edge": EdgeCandidateFactory().pk,
        "cand": EntityCandidateFactory(id=SHARED_ID + 1).pk,  # no entity has this id
    }
    before = statuses()
    with pytest.raises(CommandError, match=error):
        run("kg_moderate", "alias", "--user", "mod", *(a.format(**ids) for a in args))
    assert statuses() == before and Entity.objects.get().aliases == []


def test_canonical_belongs_to_alias_only(moderator):
    cand = EntityCandidateFactory()
    with pytest.raises(CommandError, match="--canonical applies only to alias"):
        run("kg_moderate", "approve", "--ids", str(cand.pk), "--canonical", "1", "--user", "mod")
    cand.refresh_from_db()
    assert cand.status == "pending"


def test_help_explains_the_page_options_and_their_defaults():
    text = " ".join(Command().create_parser("manage.py", "kg_moderate").format_help().split())
    assert "only candidates with at least this confidence, 0..1 (default: no minimum)" in text
    assert "page size, 1..200 (default: 50)" in text
    assert f"candidates to skip before the page, 0..{MAX_OFFSET} (default: 0)" in text
    assert "--noinput, --no-input" in text and "required for approve, reject and alias" in text


def test_alias_to_an_entity_hidden_from_the_reviewer_fails_like_a_missing_one(moderator, user):
    # An entity drawn from another user's private thought is not the moderator's to see.
    private = ThoughtFactory(owner=user, is_private=True)
    hidden = EntityFactory(name="Quillport harbour", source_thought=private)
    cand = EntityCandidateFactory(name="Quillport")
    with pytest.raises(CommandError, match=f"--canonical {hidden.pk} names no entity"):
        run("kg_moderate", "alias", "--ids", str(cand.pk), "--canonical", str(hidden.pk),
            "--user", "mod")  # fmt: skip
    cand.refresh_from_db()
    hidden.refresh_from_db()
    assert cand.status == "pending" and hidden.aliases == []


def test_a_decision_that_fails_for_some_candidates_exits_with_an_error(moderator):
    good = EntityCandidateFactory(name="Kafka")
    # No entities by these names, so approving the edge fails; its own id, so not ambiguous.
    orphan = EdgeCandidateFactory(id=good.pk + 1000, source_name="Nowhere", target_name="Nobody")
    out = StringIO()
    with pytest.raises(CommandError, match="1 candidate\\(s\\) not decided"):
        call_command(
            "kg_moderate", "approve", "--ids", f"{good.pk},{orphan.pk}", "--target", "mixed",
            "--user", moderator.username, stdout=out, stderr=StringIO(), stdin=StringIO(),
        )  # fmt: skip
    assert f"FAIL edge {orphan.pk}" in out.getvalue()
    assert "approve: 1 of 2 candidate(s)" in out.getvalue()
    good.refresh_from_db()
    orphan.refresh_from_db()
    assert (good.status, orphan.status) == ("approved", "pending")  # the good one still landed


def test_observation_candidates_are_listed_and_decided_by_id(moderator):
    from kg.models import Observation, ObservationCandidate
    from kg.services import StagedObservation, stage_observations

    ledger = EntityFactory(name="Ledger")
    note = StagedObservation("Ledger: nightly", "nightly", "Ledger", ledger.pk)
    stage_observations(observations=[note], origin="mcp:1")
    cand = ObservationCandidate.objects.get()
    out = run("kg_moderate", "list", "--target", "observation")
    assert f"observation {cand.pk}: Ledger: nightly" in out
    with pytest.raises(CommandError, match="only entity candidates can be aliased"):
        run("kg_moderate", "alias", "--ids", str(cand.pk), "--canonical", str(ledger.pk),
            "--user", "mod")  # fmt: skip
    out = run("kg_moderate", "approve", "--ids", str(cand.pk), "--user", "mod")
    assert f"ok   observation {cand.pk}: created observation 'Ledger: nightly'" in out
    assert Observation.objects.get().entity == ledger
