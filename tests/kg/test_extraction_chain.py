"""The extractor chain through its service: CLI fixture, Grok on a loopback server, heuristic."""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from kg.extraction import ExtractionUnavailable, extract
from kg.extraction.parse import ParseError, parse_extraction, repair
from legacymind.providers import chat
from tests.kg.conftest import FAKE_CLI

SECRET = "The zebra-ledger service depends on Cassandra."
# A text that writes every name the stub models answer: their answers are checked against it
# (KG_EXTRACT_GROUNDED), and a name a text never writes would be dropped.
MODEL_TEXT = "The Billing API depends on Postgres, and the Ledger writes to Kafka."
GROK_JSON = json.dumps(
    {
        "entities": [
            {"id": "e1", "label": "Ledger", "type": "service"},
            {"id": "e2", "label": "Kafka", "type": "technology"},
        ],
        "edges": [{"from_id": "e1", "to_id": "e2", "relation": "writes_to"}],
    }
)


def names(result) -> set[str]:
    return {e.name for e in result.entities}


def test_cli_success_parses_entities_and_edges_and_reads_prompt_on_stdin(
    fake_cli, monkeypatch, tmp_path
):
    record = tmp_path / "prompt.txt"
    monkeypatch.setenv("FAKE_CLI_RECORD", str(record))
    result = extract(MODEL_TEXT)
    assert result.provider == "cli"
    assert result.model == "gemini-2.5-pro"
    assert names(result) == {"Billing API", "Postgres"}
    assert result.entities[0].entity_type == "service"
    assert [(e.source, e.target, e.rel_type) for e in result.edges] == [
        ("Billing API", "Postgres", "depends_on")
    ]
    assert MODEL_TEXT in record.read_text()
    assert len(result.prompt_hash) == 64


@pytest.mark.parametrize("prefix", ["IV_CLI", "IV_SYNTH_CLI"])
def test_cli_command_and_args_from_env_with_model_substituted(monkeypatch, tmp_path, prefix):
    argv = tmp_path / "argv.json"
    monkeypatch.setenv("FAKE_CLI_ARGV", str(argv))
    monkeypatch.delenv("IV_CLI_CMD")
    monkeypatch.setenv(f"{prefix}_CMD", f"{sys.executable} {FAKE_CLI}")
    monkeypatch.setenv(f"{prefix}_ARGS_JSON", '["-m", "{model}", "--json"]')
    monkeypatch.setenv("GEMINI_MODEL", "gemini-test-model")
    result = extract(MODEL_TEXT)
    assert (result.provider, result.model) == ("cli", "gemini-test-model")
    assert json.loads(argv.read_text()) == ["-m", "gemini-test-model", "--json"]


def test_cli_model_comes_from_iv_models(fake_cli, monkeypatch):
    monkeypatch.setenv("IV_MODELS", "gemini-2.5-flash,gemini-2.5-pro")
    assert extract(MODEL_TEXT).model == "gemini-2.5-flash"


@pytest.mark.parametrize("mode", ["fenced", "garbled"])
def test_cli_fenced_or_unclosed_output_is_repaired(fake_cli, mode):
    fake_cli(mode)
    result = extract(MODEL_TEXT)
    assert result.provider == "cli"
    assert names(result) == {"Billing API", "Postgres"}


def test_cli_edges_to_unknown_ids_are_dropped(fake_cli):
    fake_cli("unknown_edge")
    result = extract(MODEL_TEXT)
    assert result.provider == "cli"
    assert len(result.edges) == 1


@pytest.mark.parametrize("mode", ["garbage", "invalid", "fail"])
def test_cli_unusable_output_falls_back_to_heuristic_when_grok_is_off(fake_cli, mode):
    fake_cli(mode)
    result = extract(SECRET)
    assert result.provider == "heuristic"
    assert names(result) == {"zebra-ledger service", "Cassandra"}
    assert result.edges[0].rel_type == "depends_on"


def test_cli_timeout_falls_through(fake_cli, monkeypatch):
    fake_cli("sleep")
    monkeypatch.setenv("IV_CLI_TIMEOUT", "0.5")
    assert extract(SECRET).provider == "heuristic"


def test_cli_empty_answer_lets_next_stage_run(fake_cli):
    fake_cli("empty")
    assert extract(SECRET).provider == "heuristic"


def test_cli_failure_falls_back_to_grok(grok):
    grok.chat_fn = lambda messages: "```json\n" + GROK_JSON + "\n```"
    result = extract(MODEL_TEXT)
    assert result.provider == "grok"
    assert names(result) == {"Ledger", "Kafka"}
    assert grok.requests[0]["auth"] == "Bearer test-key"
    assert grok.requests[0]["body"]["model"] == "grok-test"


@pytest.mark.parametrize("status", [401, 500])
def test_grok_error_falls_back_to_heuristic(grok, status):
    grok.chat_fn = lambda messages: GROK_JSON
    grok.fail_next(status, times=3)
    result = extract(SECRET)
    assert result.provider == "heuristic"
    assert result.entities


def test_grok_failure_is_logged_with_its_status(grok, caplog):
    grok.fail_next(401, times=3)
    with caplog.at_level(logging.DEBUG, logger="kg.extract"):
        extract(SECRET)
    fails = [
        json.loads(r.getMessage().split(" ", 1)[1])
        for r in caplog.records
        if r.getMessage().startswith("kg.extract_fail")
    ]
    assert [f["cmd"] for f in fails] == ["/bin/false", "grok"]
    assert fails[1]["code"] == 401


def test_grok_disabled_by_flag_is_skipped(grok, monkeypatch):
    monkeypatch.setenv("IV_ALLOW_GROK", "false")
    assert extract(SECRET).provider == "heuristic"
    assert grok.requests == []


def unavailable_log(caplog) -> str:
    """What the chain told the operator (at WARNING) when it answered a 503."""
    return next(
        r.getMessage()
        for r in caplog.records
        if r.levelno == logging.WARNING and r.getMessage().startswith("kg.extract_unavailable")
    )


def test_a_mistyped_grok_flag_keeps_grok_off_and_says_why(grok, monkeypatch, settings, caplog):
    """Set at run time (the settings refuse it at start-up): a typo of "false" must not send
    the text to a third party."""
    grok.chat_fn = lambda messages: GROK_JSON
    monkeypatch.setenv("IV_ALLOW_GROK", "flase")
    assert extract(SECRET).provider == "heuristic"
    assert grok.requests == []
    settings.IV_HEURISTIC_FALLBACK = False
    with pytest.raises(ExtractionUnavailable):
        extract(SECRET)
    assert "IV_ALLOW_GROK='flase' is not a boolean" in unavailable_log(caplog)
    monkeypatch.setenv("IV_ALLOW_GROK", "YES")  # the words the settings accept, any case
    assert extract(SECRET).provider == "grok"


def test_chat_complete_never_calls_grok_on_a_mistyped_flag(grok, monkeypatch):
    """The same rule in ``chat.complete``, which the journaling agent's reflections use."""
    grok.chat_fn = lambda messages: "an answer"
    monkeypatch.setenv("IV_CLI_CMD", "/bin/false")
    monkeypatch.setenv("IV_ALLOW_GROK", "flase")
    with pytest.raises(chat.ChatError, match="IV_ALLOW_GROK='flase' is not a boolean"):
        chat.complete("a prompt")
    assert grok.requests == []
    monkeypatch.setenv("IV_ALLOW_GROK", "on")
    assert chat.complete("a prompt").provider == "grok"


@pytest.mark.parametrize("value", ["soon", "0", "-3", "inf"])
def test_a_bad_timeout_fails_its_stage_naming_the_variable_and_the_chain_goes_on(
    grok, monkeypatch, settings, caplog, value
):
    grok.chat_fn = lambda messages: GROK_JSON
    monkeypatch.setenv("GROK_TIMEOUT", value)
    assert extract(SECRET).provider == "heuristic"
    assert grok.requests == []  # refused before any call
    monkeypatch.setenv("IV_CLI_TIMEOUT", value)
    settings.IV_HEURISTIC_FALLBACK = False
    with pytest.raises(ExtractionUnavailable):
        extract(SECRET)
    logged = unavailable_log(caplog)
    assert f"IV_CLI_TIMEOUT must be a positive number of seconds, not {value!r}" in logged
    assert f"GROK_TIMEOUT must be a positive number of seconds, not {value!r}" in logged


def test_heuristic_disabled_and_every_stage_failing_is_a_clear_error(settings, caplog):
    settings.IV_HEURISTIC_FALLBACK = False
    with pytest.raises(ExtractionUnavailable) as err:
        extract(SECRET)
    assert "IV_HEURISTIC_FALLBACK=0" in unavailable_log(caplog)
    assert "exited 1" in unavailable_log(caplog)
    assert err.value.status_code == 503


def test_heuristic_caps_apply(settings):
    settings.IV_HEURISTIC_MAX_ENTITIES = 2
    settings.IV_HEURISTIC_MAX_EDGES = 1
    # Named ends: the scorer stages no edge to a bare "the web app" in a passage.
    result = extract(
        "# Ledgerly\n\nLedgerly uses Redis and Postgres. The export worker calls Stripe."
    )
    assert len(result.entities) == 2
    assert len(result.edges) == 1
    assert {e.confidence for e in result.entities} == {0.7}
    assert {e.confidence for e in result.edges} == {0.6}


def test_logs_carry_counts_and_lengths_never_the_text(fake_cli, caplog):
    fake_cli("fail")
    with caplog.at_level(logging.DEBUG, logger="kg.extract"):
        extract(SECRET, thought_id="t-1")
    fail = [r for r in caplog.records if r.getMessage().startswith("kg.extract_fail")]
    info = [r for r in caplog.records if r.getMessage().startswith("kg.extract ")]
    assert fail and info
    payload = json.loads(fail[0].getMessage().split(" ", 1)[1])
    assert payload["code"] == 3
    assert payload["error"] == "nonzero exit"
    assert payload["stderr_chars"] == len("quota exceeded for model\n")
    assert set(payload) == {"cmd", "code", "error", "stdout_chars", "stderr_chars", "latency_ms"}
    summary = json.loads(info[0].getMessage().split(" ", 1)[1])
    assert summary["provider"] == "heuristic"
    assert summary["thought_id"] == "t-1"
    assert summary["entities"] == 2 and summary["edges"] == 1
    assert set(summary) == {"thought_id", "provider", "model", "entities", "edges", "latency_ms"}
    for record in caplog.records:
        assert "zebra-ledger" not in record.getMessage()
        assert "quota exceeded" not in record.getMessage()  # the CLI's words are not logged


MARKER = "Marker-7f3a9c private words"
PRIVATE = f"{MARKER}: the zebra-ledger service depends on Cassandra."


@contextmanager
def debug_logs(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """The project's loggers at DEBUG (the extractor's and the chat providers')."""
    with (
        caplog.at_level(logging.DEBUG, logger="kg"),
        caplog.at_level(logging.DEBUG, logger="legacymind"),
    ):
        yield


def _no_marker_logged(caplog: pytest.LogCaptureFixture) -> list[dict]:
    assert caplog.records
    for record in caplog.records:
        assert "7f3a9c" not in record.getMessage()
        assert "7f3a9c" not in repr(record.args)
    return [
        json.loads(r.getMessage().split(" ", 1)[1])
        for r in caplog.records
        if r.getMessage().startswith("kg.extract_fail")
    ]


def test_unparseable_cli_output_quoting_the_thought_is_never_logged(fake_cli, caplog):
    fake_cli("quote")
    with debug_logs(caplog):
        assert extract(PRIVATE).provider == "heuristic"
    (fail,) = _no_marker_logged(caplog)
    assert fail["code"] == 0 and fail["error"] == "invalid output"
    assert fail["stdout_chars"] > len(MARKER) and fail["stderr_chars"] > len(MARKER)


def test_a_cli_echoing_its_prompt_on_failure_is_never_logged(fake_cli, caplog):
    fake_cli("echo")
    with debug_logs(caplog):
        extract(PRIVATE)
    (fail,) = _no_marker_logged(caplog)
    assert fail["code"] == 2 and fail["stderr_chars"] > len(PRIVATE)


def test_unparseable_grok_answer_quoting_the_thought_is_never_logged(grok, caplog):
    grok.chat_fn = lambda messages: f"Sorry, no JSON today. You wrote: {PRIVATE}"
    with debug_logs(caplog):
        assert extract(PRIVATE).provider == "heuristic"
    fails = _no_marker_logged(caplog)
    assert fails[-1]["cmd"] == "grok" and fails[-1]["error"] == "invalid output"
    assert fails[-1]["stdout_chars"] > len(PRIVATE)


def test_a_schema_error_quoting_a_label_is_never_logged(grok, caplog):
    """A jsonschema message quotes the offending value, a label taken from the thought."""
    bad = {"entities": [{"id": "e1", "label": MARKER, "type": "x", "confidence": MARKER}]}
    grok.chat_fn = lambda messages: json.dumps({**bad, "edges": []})
    with debug_logs(caplog):
        assert extract(PRIVATE).provider == "heuristic"
    assert _no_marker_logged(caplog)[-1]["error"] == "invalid output"


def test_sources_line_is_never_sent_or_extracted(fake_cli, monkeypatch, tmp_path):
    record = tmp_path / "prompt.txt"
    monkeypatch.setenv("FAKE_CLI_RECORD", str(record))
    fake_cli("fail")
    text = "Grafana reads from Prometheus.\nSources: thoughts:42, kge:7 (Vault, Consul)"
    result = extract(text)
    assert "kge:7" not in record.read_text()
    assert names(result) == {"Grafana", "Prometheus"}


def test_parser_rejects_unrepairable_and_schema_breaking_output():
    with pytest.raises(ParseError):
        parse_extraction("nothing here")
    with pytest.raises(ParseError, match="schema"):
        parse_extraction('{"entities": [{"id": "x1", "label": "A"}], "edges": []}')
    with pytest.raises(ParseError):
        parse_extraction('{"entities": [}')
    assert parse_extraction('{"entities": [], "edges": []}') == ([], [], 0)
    assert repair('noise {"a": [1, {"b": "c"}], "d": tru') == '{"a": [1, {"b": "c"}]}'
