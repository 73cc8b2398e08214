"""``seed_demo`` and ``ensure_superuser``: idempotent, through the management commands."""

from __future__ import annotations

import stat
from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from rest_framework.authtoken.models import Token

from kg.models import CandidateStatus, Edge, EdgeCandidate, Entity, EntityCandidate, Observation
from kg.services import DecisionItem, candidates_decide
from legacymind.providers import embeddings
from thoughts import demo
from thoughts.models import Thought

pytestmark = pytest.mark.django_db


def run(command: str, *args: str) -> str:
    out = StringIO()
    call_command(command, *args, stdout=out)
    return out.getvalue()


def counts() -> dict[str, int]:
    return {
        "users": User.objects.count(),
        "thoughts": Thought.objects.count(),
        "entities": Entity.objects.count(),
        "observations": Observation.objects.count(),
        "edges": Edge.objects.count(),
        "entity_candidates": EntityCandidate.objects.count(),
        "edge_candidates": EdgeCandidate.objects.count(),
    }


def thought(key: str) -> Thought:
    return Thought.objects.get(id=demo.demo_thought_id(key))


# --- seed_demo -------------------------------------------------------------------------------
def test_seed_demo_twice_creates_everything_once():
    first = run("seed_demo")
    after_first = counts()
    second = run("seed_demo")
    assert counts() == after_first
    assert after_first["thoughts"] == len(demo.THOUGHTS)
    assert after_first["entities"] == len(demo.ENTITIES)
    assert after_first["edges"] == len(demo.EDGES)
    assert after_first["observations"] == len(demo.OBSERVATIONS)
    assert "created" in first and "embedded 17 with hash" in first
    assert "nothing created" in second and "embedded 0" in second
    assert "pending_entity_candidates 3, pending_edge_candidates 2" in second


def test_seeded_chains_are_linked_and_ordered():
    run("seed_demo")
    user = User.objects.get(username=demo.DEMO_USERNAME)
    assert not user.has_usable_password()
    chain = list(Thought.objects.filter(chain_id="demo-chain-checkout").order_by("created_at"))
    assert [t.id for t in chain] == [demo.demo_thought_id(f"checkout-{i}") for i in range(1, 6)]
    assert {t.owner_id for t in chain} == {user.id}
    assert {t.session_id for t in chain} == {"demo-session-1"}
    assert thought("checkout-2").previous_thought == thought("checkout-1")
    assert thought("checkout-3").revises_thought == thought("checkout-2")
    assert thought("checkout-4").branch_from == thought("checkout-2")
    assert thought("checkout-5").previous_thought == thought("checkout-3")
    assert thought("journal-2").origin == "journal"
    assert {t.mode for t in Thought.objects.all()} >= {"debug", "build", "plan", "question"}
    assert "photography" in thought("photo-1").tags


def test_seeded_rows_carry_embeddings_of_the_configured_provider():
    run("seed_demo")
    provider = embeddings.get_provider()
    for model in (Thought, Entity, Observation):
        rows = model.objects.all()
        assert rows and all(r.embedding is not None for r in rows)
        assert {(r.embedding_provider, r.embedding_model, r.embedding_dim) for r in rows} == {
            (provider.name, provider.model, provider.dim)
        }
    edge = Edge.objects.get(rel_type="depends_on")
    assert (edge.source.name, edge.target.name) == ("cart-service", "session-store")
    obs = Observation.objects.get(name="session payloads grew tenfold")
    assert obs.entity.name == "serializer" and obs.source_thought == thought("checkout-3")


def test_seeding_after_a_provider_change_re_embeds_the_demo(settings):
    run("seed_demo")
    settings.EMBEDDING_DIM = 256  # the hash provider at another size: another model
    embeddings._cached.cache_clear()
    out = run("seed_demo")
    assert "nothing created; embedded 17 with hash/feature-hash-256 (256-d)" in out
    assert set(Thought.objects.values_list("embedding_dim", flat=True)) == {256}


def test_candidates_are_pending_and_a_decided_one_is_not_recreated(moderator):
    run("seed_demo")
    pending = EntityCandidate.objects.filter(origin="demo", status=CandidateStatus.PENDING)
    assert pending.count() == len(demo.ENTITY_CANDIDATES)
    assert EdgeCandidate.objects.filter(origin="demo", status=CandidateStatus.PENDING).count() == 2
    assert all(c.staged_by_thought_id for c in pending)
    rejected = EntityCandidate.objects.get(name="connection pool")
    candidates_decide(
        items=[DecisionItem(id=rejected.pk, kind="entity", decision="reject")],
        reviewer=moderator,
    )
    run("seed_demo")
    assert EntityCandidate.objects.filter(name="connection pool").count() == 1
    assert EntityCandidate.objects.get(name="connection pool").status == CandidateStatus.REJECTED


def test_seed_demo_fails_clearly_and_writes_nothing_when_embedding_fails(settings, openai_stub):
    settings.EMBEDDING_PROVIDER = "openai"
    settings.OPENAI_API_KEY = "sk-test"
    settings.OPENAI_BASE_URL = openai_stub.base_url
    settings.EMBEDDING_MAX_RETRIES = 0
    embeddings._cached.cache_clear()
    openai_stub.fail_next(500)
    with pytest.raises(CommandError, match="seed_demo: openai embeddings failed"):
        run("seed_demo")
    assert not Thought.objects.exists() and not Entity.objects.exists()


# --- ensure_superuser ------------------------------------------------------------------------
@pytest.fixture
def secret(tmp_path, monkeypatch):
    for name in (
        "DJANGO_SUPERUSER_USERNAME",
        "DJANGO_SUPERUSER_PASSWORD",
        "DJANGO_SUPERUSER_EMAIL",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("PORT", raising=False)
    return tmp_path / "var" / "superuser.txt"


def login_block(out: str) -> dict[str, str]:
    fields = {}
    for line in out.splitlines()[1:]:
        key, _, value = line.strip().partition(":")
        fields[key] = value.strip()
    return fields


def test_ensure_superuser_twice_keeps_one_user_and_prints_the_same_login(secret):
    first = login_block(run("ensure_superuser", "--secret-file", str(secret)))
    second = login_block(run("ensure_superuser", "--secret-file", str(secret)))
    assert User.objects.filter(username="admin").count() == 1
    user = User.objects.get(username="admin")
    assert user.is_superuser and user.is_staff and user.is_active
    assert user.groups.filter(name="KG moderators").exists()
    assert user.has_perm("kg.moderate")
    assert first["URL"] == "http://127.0.0.1:8000/admin/"
    assert first["username"] == second["username"] == "admin"
    password = first["password"].split()[0]
    assert second["password"].split()[0] == password
    assert "generated" in first["password"] and "from" in second["password"]
    assert user.check_password(password)
    token = first["API token"].split()[0]
    assert second["API token"].split()[0] == token == Token.objects.get(user=user).key
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600
    assert f"password={password}" in secret.read_text()


def test_ensure_superuser_takes_login_details_from_the_environment(secret, monkeypatch):
    monkeypatch.setenv("DJANGO_SUPERUSER_USERNAME", "root-mod")
    monkeypatch.setenv("DJANGO_SUPERUSER_PASSWORD", "a-long-pass-phrase")
    monkeypatch.setenv("DJANGO_SUPERUSER_EMAIL", "root@example.org")
    monkeypatch.setenv("PORT", "8765")
    out = login_block(run("ensure_superuser", "--secret-file", str(secret)))
    assert out["URL"] == "http://127.0.0.1:8765/admin/"
    assert out["password"].startswith("a-long-pass-phrase (from DJANGO_SUPERUSER_PASSWORD)")
    user = User.objects.get(username="root-mod")
    assert user.check_password("a-long-pass-phrase") and user.email == "root@example.org"
    assert not secret.exists(), "a given password is never written to disk"


def test_an_existing_superuser_keeps_a_password_we_do_not_know(secret):
    User.objects.create_superuser("admin", "a@example.org", "their-own-password")
    out = login_block(run("ensure_superuser", "--secret-file", str(secret)))
    assert out["password"].startswith("(unchanged")
    user = User.objects.get(username="admin")
    assert user.check_password("their-own-password")
    assert user.groups.filter(name="KG moderators").exists()
    assert not secret.exists()


def test_an_existing_user_is_promoted_to_superuser(secret, monkeypatch):
    User.objects.create_user("admin", password="old-password-123")
    monkeypatch.setenv("DJANGO_SUPERUSER_PASSWORD", "new-password-456")
    run("ensure_superuser", "--secret-file", str(secret))
    user = User.objects.get(username="admin")
    assert user.is_superuser and user.is_staff
    assert user.check_password("new-password-456")


def test_the_admin_login_page_accepts_the_printed_login(secret, client):
    out = login_block(run("ensure_superuser", "--secret-file", str(secret)))
    assert client.login(username=out["username"], password=out["password"].split()[0])
    response = client.get("/admin/")
    assert response.status_code == 200
