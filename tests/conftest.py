from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.contrib.auth.models import Group, User
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from legacymind.providers import embeddings
from tests.support.openai_server import OpenAIStub


@pytest.fixture(autouse=True)
def _hash_embeddings(settings: object) -> Iterator[None]:
    """Tests embed with the deterministic hash provider unless a test picks another."""
    settings.EMBEDDING_PROVIDER = "hash"  # type: ignore[attr-defined]
    settings.EMBEDDING_DIM = 0  # type: ignore[attr-defined]
    embeddings._cached.cache_clear()
    yield
    embeddings._cached.cache_clear()


@pytest.fixture(autouse=True)
def _no_chat_providers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing reaches a real model: no gemini CLI, no Grok key, unless a test sets them."""
    monkeypatch.setenv("IV_CLI_CMD", "/bin/false")
    for name in ("IV_SYNTH_CLI_CMD", "IV_SCRIPT_PATH", "GROK_API_KEY", "IV_MODELS"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(autouse=True)
def _no_distress_model_check(settings: object) -> None:
    """The distress detector's chat-model layer stays off unless a test turns it on: tests that
    configure a chat model for something else count that model's requests."""
    settings.DISTRESS_MODEL_CHECK = "off"  # type: ignore[attr-defined]


@pytest.fixture
def openai_stub() -> Iterator[OpenAIStub]:
    stub = OpenAIStub().start()
    yield stub
    stub.stop()


def _user(username: str) -> User:
    return User.objects.create_user(username=username, password="pw-" + username)


@pytest.fixture
def user(db: None) -> User:
    return _user("alice")


@pytest.fixture
def other_user(db: None) -> User:
    return _user("bob")


@pytest.fixture
def moderator(db: None) -> User:
    mod = _user("mod")
    mod.groups.add(Group.objects.get(name="KG moderators"))
    return mod


def client_for(user: User | None) -> APIClient:
    client = APIClient()
    if user is not None:
        token, _ = Token.objects.get_or_create(user=user)
        client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


@pytest.fixture
def api(user: User) -> APIClient:
    return client_for(user)


@pytest.fixture
def other_api(other_user: User) -> APIClient:
    return client_for(other_user)


@pytest.fixture
def mod_api(moderator: User) -> APIClient:
    return client_for(moderator)


@pytest.fixture
def anon_api() -> APIClient:
    return APIClient()
