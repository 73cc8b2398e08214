"""The chat chain behind the inner voice (CLI fixture script, Grok on a loopback server, the
offline composer) and the KG extraction of the synthesis."""

from __future__ import annotations

import json
import sys

import pytest

from innervoice.compose import answer_shown, feedback_offline, sources_line, synthesis_offline
from innervoice.retrieval import Snippet
from kg.models import EdgeCandidate, EntityCandidate
from tests.innervoice.conftest import FAKE_CLI, MARKER, QUERY, ask, thought_at
from thoughts.models import Thought

pytestmark = pytest.mark.django_db


def test_cli_answers_with_the_prompt_on_stdin(api, user, monkeypatch, tmp_path, settings):
    record, argv = tmp_path / "prompt.txt", tmp_path / "argv.json"
    monkeypatch.setenv("IV_CLI_CMD", f"{sys.executable} {FAKE_CLI}")
    monkeypatch.setenv("FAKE_CLI_MODE", "ok")
    monkeypatch.setenv("FAKE_CLI_RECORD", str(record))
    monkeypatch.setenv("FAKE_CLI_ARGV", str(argv))
    settings.INNER_VOICE_MODEL = "gemini-iv-test"
    thought_at(user, 0.9, 1, content="Billing keeps its invoices in Postgres.")

    body = ask(api, include_feedback=False, auto_extract_to_kg=False).json()

    assert (body["synth_provider"], body["synth_model"]) == ("cli", "gemini-iv-test")
    assert json.loads(body["answer"])["entities"]  # the fixture's answer, verbatim
    prompt = record.read_text()
    assert QUERY in prompt and "Billing keeps its invoices in Postgres." in prompt
    assert json.loads(argv.read_text()) == ["-m", "gemini-iv-test"]


def test_cli_failure_falls_back_to_grok(api, monkeypatch, voice):
    monkeypatch.setenv("IV_CLI_CMD", f"{sys.executable} {FAKE_CLI}")
    monkeypatch.setenv("FAKE_CLI_MODE", "fail")
    body = ask(api, auto_extract_to_kg=False).json()
    assert (body["synth_provider"], body["synth_model"]) == ("grok", "grok-test")
    assert len([r for r in voice.requests if r["path"].endswith("/chat/completions")]) == 2


def test_no_chat_provider_gives_the_offline_composer_which_says_so(api, user):
    source = thought_at(user, 0.9, 2, content="Billing keeps its invoices in Postgres.")
    first = ask(api, auto_extract_to_kg=False)
    assert first.status_code == 201
    body = first.json()
    assert body["synth_provider"] == "offline-composer"
    assert body["answer"].startswith("No chat model answered")
    # The answer reads as prose: its source is cited once, in sources_compact and the stored
    # thought's Sources line, never as an id inside the text.
    assert f"thoughts:{source.id}" not in body["answer"]
    assert body["sources_compact"] == f"thoughts:{source.id}"
    stored = Thought.objects.get(origin="inner_voice").content
    assert stored.count("Sources:") == 1 and stored.endswith(f"Sources: thoughts:{source.id}")
    assert "Billing keeps its invoices in Postgres." in body["answer"]
    assert body["feedback"] and len(body["feedback"].splitlines()) <= 3
    assert Thought.objects.filter(origin="inner_voice").count() == 1
    # The stored synthesis is material for later asks, and whether it passes the floor depends
    # on the random id it quotes (a hash embedding of its words): set aside, the material is
    # the same as the first ask's, and so must the answer be.
    Thought.objects.filter(
        origin__in=[Thought.Origin.INNER_VOICE, Thought.Origin.INNER_VOICE_FEEDBACK]
    ).delete()
    again = ask(api, auto_extract_to_kg=False).json()
    assert (again["answer"], again["feedback"]) == (body["answer"], body["feedback"])


def test_offline_composer_without_any_snippet(api):
    body = ask(api, auto_extract_to_kg=False).json()
    assert body["sources_compact"] == ""
    assert "none of your stored thoughts" in body["answer"]


def test_extraction_stages_candidates_by_the_synthesis_thought(
    api, voice, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        body = ask(api).json()
    synth_id = body["synth_thought_id"].removeprefix("thoughts:")
    feedback_id = body["feedback_thought_id"].removeprefix("thoughts:")
    entities = EntityCandidate.objects.all()
    # The model's names, checked against the synthesis, are staged as the synthesis writes them.
    assert {e.name for e in entities} == {"billing service", "Postgres"}
    assert {str(e.staged_by_thought_id) for e in entities} == {synth_id}
    assert {e.origin for e in entities} == {"inner_voice"}
    edge = EdgeCandidate.objects.get()
    assert str(edge.staged_by_thought_id) == synth_id and edge.origin == "inner_voice"
    assert not EntityCandidate.objects.filter(staged_by_thought_id=feedback_id).exists()


@pytest.mark.django_db(transaction=True)
def test_in_process_extraction_reports_the_staged_counts(api, voice):
    body = ask(api).json()
    assert body["extracted"] == {"status": "staged", "entities": 2, "relationships": 1}


@pytest.mark.django_db(transaction=True)
def test_in_process_extraction_that_fails_is_reported_failed_not_staged(api, user, settings):
    """No extractor answering (CLI failing, no Grok, heuristic off) used to read "staged" with
    0 candidates, as if nothing new had been found. The answer itself still stands."""
    settings.IV_HEURISTIC_FALLBACK = False
    thought_at(user, 0.9, 4, content="Billing keeps its invoices in Postgres.")
    response = ask(api)
    assert response.status_code == 201, response.content
    assert response.json()["extracted"] == {
        "status": "failed",
        "entities": None,
        "relationships": None,
    }
    assert Thought.objects.filter(origin="inner_voice").count() == 1


def test_no_extraction_when_auto_extract_is_off(api, voice, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        body = ask(api, auto_extract_to_kg=False).json()
    assert body["extracted"] == {"status": "skipped", "entities": None, "relationships": None}
    assert callbacks == [] and not EntityCandidate.objects.exists()


def test_extraction_inside_an_outer_transaction_is_reported_queued(
    api, voice, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        body = ask(api).json()
    assert body["extracted"]["status"] == "queued" and len(callbacks) == 1  # the extraction


def test_the_offline_follow_up_is_one_clean_question():
    snippet = Snippet(
        "thought", 1, "I keep saying yes to every meeting. Then I resent it.", 0.9, False
    )
    assert feedback_offline(snippets=[snippet]) == (
        "What would confirm or contradict this: I keep saying yes to every meeting?"
    )


def test_the_offline_answer_cites_no_ids_and_reads_without_its_sources_line():
    snippets = [
        Snippet(
            "thought", "a673e95c-2258-5c40-b517-d818c4198075", "Checkout got slow.", 0.9, False
        ),
        Snippet("observation", 2, "checkout latency 2s after deploy", 0.8, False),
    ]
    answer = synthesis_offline(snippets=snippets)
    assert "thoughts:" not in answer and "kgo:" not in answer and "Sources" not in answer
    assert answer.splitlines()[1:] == ["- Checkout got slow.", "- checkout latency 2s after deploy"]
    stored = f"{answer}\n\n{sources_line('thoughts:a673e95c-2258-5c40-b517-d818c4198075, kgo:2')}"
    assert answer_shown(stored) == answer
    # A synthesis stored while the offline answer still cited ids inline reads the same.
    older = stored.replace("Checkout got slow.", "Checkout got slow. (thoughts:a673e95c-2258)")
    assert answer_shown(older) == answer
    assert answer_shown("No chat model answered.\n\nSources: none") == "No chat model answered."


@pytest.mark.parametrize("mode", ["binary", "echo"])
def test_a_cli_that_prints_bytes_or_echoes_the_prompt_fails_over_and_logs_no_words(
    api, monkeypatch, voice, caplog, mode
):
    """Output that is not UTF-8 was a 500 (UnicodeDecodeError); a CLI echoing its input on
    stderr put the question into the DEBUG log."""
    monkeypatch.setenv("IV_CLI_CMD", f"{sys.executable} {FAKE_CLI}")
    monkeypatch.setenv("FAKE_CLI_MODE", mode)
    for name in ("", "legacymind", "kg", "innervoice"):
        caplog.set_level("DEBUG", logger=name)
    response = ask(api)  # extraction too: its own CLI stage sees the same output
    assert response.status_code == 201, response.content
    assert response.json()["synth_provider"] == "grok"
    assert MARKER not in caplog.text
    assert any("chat.cli_fail" in r.getMessage() for r in caplog.records)


def test_a_runaway_answer_is_cut_and_its_own_citations_dropped(api, user, voice):
    source = thought_at(user, 0.9, 3, content="Billing keeps its invoices in Postgres.")
    long_answer = "Billing leans on Postgres. " * 2000 + "\nSources: thoughts:deadbeef, kge:99"

    def answer(messages):
        synthesis = any(m["role"] == "system" and "inner voice" in m["content"] for m in messages)
        return long_answer if synthesis else "Why Postgres? " * 200

    voice.chat_fn = answer
    body = ask(api, auto_extract_to_kg=False).json()
    assert len(body["answer"]) <= 8000 and body["answer"].endswith("…")
    assert "deadbeef" not in body["answer"] and "kge:99" not in body["answer"]
    assert len(body["feedback"]) <= 600
    stored = Thought.objects.get(origin="inner_voice").content
    assert stored.count("Sources:") == 1 and f"thoughts:{source.id}" in stored


def test_an_offline_answer_logs_one_info_summary_like_any_other(api, caplog):
    """Spec 000: a single INFO summary per call; the fallback's reasons are DEBUG detail."""
    caplog.set_level("DEBUG", logger="innervoice")
    assert ask(api, auto_extract_to_kg=False).json()["synth_provider"] == "offline-composer"
    info = [
        r.getMessage() for r in caplog.records if r.name == "innervoice" and r.levelname == "INFO"
    ]
    assert len(info) == 1 and info[0].startswith("inner_voice synth_id=")
