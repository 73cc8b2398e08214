"""A CLI that hangs (or cannot start) costs one ask its timeout once: the synthesis, the
follow-up question and the synthesis' KG extraction used to wait for it in turn. The real
fixture script sleeps; IV_CLI_TIMEOUT keeps each wait short."""

from __future__ import annotations

import sys
import time
from typing import Any

import pytest

from kg.models import ThoughtExtraction
from tests.innervoice.conftest import FAKE_CLI, FEEDBACK, QUERY, ask, thought_at

# An ask that waited for the CLI twice takes at least 2 x TIMEOUT, so that is the bound. The
# rest of the ask (the local model, the database) must fit in one TIMEOUT beside it: at 2 s it
# did not on two loaded cores (4.2 to 7.1 s in all), so the wait is long enough to tell one
# wait from two whatever the machine is doing.
TIMEOUT = 5.0


@pytest.fixture
def hanging_cli(monkeypatch, tmp_path):
    """The CLI sleeps past IV_CLI_TIMEOUT. Every start rewrites the record with its prompt, so
    the record names the last stage that started it."""
    record = tmp_path / "prompt.txt"
    monkeypatch.setenv("IV_CLI_CMD", f"{sys.executable} {FAKE_CLI}")
    monkeypatch.setenv("FAKE_CLI_MODE", "sleep")
    monkeypatch.setenv("FAKE_CLI_RECORD", str(record))
    monkeypatch.setenv("IV_CLI_TIMEOUT", str(TIMEOUT))
    return record


def timed_ask(client: Any, **body: Any) -> tuple[Any, float]:
    started = time.monotonic()
    response = ask(client, **body)
    return response, time.monotonic() - started


# transaction=True: the extraction then runs after commit inside the ask, as it does in
# production without a worker, rather than when a test's outer transaction ends.
@pytest.mark.django_db(transaction=True)
def test_a_hanging_cli_costs_an_ask_one_timeout_and_grok_answers_the_rest(api, voice, hanging_cli):
    response, elapsed = timed_ask(api)

    assert response.status_code == 201, response.content
    body = response.json()
    assert TIMEOUT <= elapsed < 2 * TIMEOUT, elapsed
    assert (body["synth_provider"], body["synth_model"]) == ("grok", "grok-test")
    assert body["feedback"] == "\n".join(FEEDBACK.splitlines()[:3])
    assert body["extracted"] == {"status": "staged", "entities": 2, "relationships": 1}
    assert ThoughtExtraction.objects.get().provider == "grok"
    # Started once, for the synthesis: neither the follow-up nor the extraction started it.
    assert QUERY in hanging_cli.read_text()


@pytest.mark.django_db(transaction=True)
def test_without_grok_a_hanging_cli_costs_one_timeout_then_the_offline_fallbacks_answer(
    api, user, hanging_cli
):
    thought_at(user, 0.9, 1, content="Billing keeps its invoices in Postgres.")

    response, elapsed = timed_ask(api)

    assert response.status_code == 201, response.content
    body = response.json()
    assert TIMEOUT <= elapsed < 2 * TIMEOUT, elapsed
    assert body["synth_provider"] == "offline-composer"
    assert body["extracted"]["status"] == "staged"
    assert ThoughtExtraction.objects.get().provider == "heuristic"
    assert QUERY in hanging_cli.read_text()


@pytest.mark.django_db(transaction=True)
def test_a_cli_that_cannot_start_is_tried_once_per_ask(api, voice, monkeypatch, caplog):
    monkeypatch.setenv("IV_CLI_CMD", "/nonexistent/gemini-cli")
    caplog.set_level("DEBUG", logger="legacymind.chat")
    caplog.set_level("DEBUG", logger="kg.extract")

    body = ask(api).json()

    assert body["synth_provider"] == "grok" and body["extracted"]["status"] == "staged"
    assert ThoughtExtraction.objects.get().provider == "grok"
    starts = [r for r in caplog.records if r.getMessage().startswith("chat.cli_fail")]
    assert len(starts) == 1  # the synthesis'; the follow-up went straight to Grok
    extraction = [r.getMessage() for r in caplog.records if r.name == "kg.extract"]
    assert any("skipped" in m for m in extraction)
    assert not any("FileNotFoundError" in m for m in extraction)  # its own start failed


@pytest.mark.django_db
def test_the_next_ask_tries_the_cli_again(api, voice, hanging_cli, monkeypatch):
    """The skip lasts one ask: a CLI that has come back answers the next one."""
    assert ask(api, auto_extract_to_kg=False).json()["synth_provider"] == "grok"
    monkeypatch.setenv("FAKE_CLI_MODE", "ok")
    assert ask(api, auto_extract_to_kg=False).json()["synth_provider"] == "cli"
