"""Citations are never knowledge: a synthesis's "Sources:"/"References:" list, a trailing
"Sources: ..." and thoughts:/kge:/kgo: ids anywhere are neither staged nor sent to a model."""

from __future__ import annotations

import pytest

from kg.extraction.heuristic import HeuristicExtractor
from kg.models import EntityCandidate

pytestmark = pytest.mark.django_db
EXTRACT = "/api/v1/kg/extract"
UUID = "9b1c2d3e-4f50-4a6b-8c7d-0e1f2a3b4c5d"
FACT = "The Billing API depends on Postgres."


@pytest.mark.parametrize(
    "citations",
    [
        f"\nSources:\n- thoughts:{UUID}\n- kge:12",
        f"\n## Sources\n\n1. thoughts:{UUID}\n2. Stripe Gateway\n   (kgo:3)",
        "\n**Sources (2):**\n* [thoughts:3f2a]\n* kge:9",
        " Sources: thoughts:3f2a kge:12",
        "\nSources (3): thoughts:3f2a, Stripe Gateway",
        "\n**Sources**: Stripe Gateway, thoughts:3f2a",
        f"\nReferences: thoughts:{UUID}",
        "\n_References_:\n- kgo:77",
        "\r\n## Sources\r\n- Stripe Gateway\r\n- kge:9\r\n",
    ],
    ids=[
        "heading-and-list",
        "markdown-heading-numbered-list",
        "emphasis-and-count",
        "inline-trailing",
        "count-on-the-line",
        "bold-label",
        "references",
        "references-heading",
        "crlf-lines",
    ],
)
def test_a_citations_list_is_never_read(citations):
    result = HeuristicExtractor().extract(FACT + citations)
    assert {e.name for e in result.entities} == {"Billing API", "Postgres"}


@pytest.mark.parametrize(
    "text",
    [
        "The Billing API uses Postgres (see [thoughts:3f2a]).",
        f"The Billing API thoughts:{UUID} uses Postgres.",
        "The Billing API uses Postgres [kge:1, kgo:2].",
        "The Billing API uses Postgres (thought:3f2a; KGE:12).",
    ],
)
def test_inline_citation_ids_are_never_names(text):
    result = HeuristicExtractor().extract(text)
    assert {e.name for e in result.entities} == {"Billing API", "Postgres"}
    assert [(e.source, e.target) for e in result.edges] == [("Billing API", "Postgres")]


def test_a_name_around_an_inline_citation_keeps_single_spaces():
    text = "The team uses Stripe kge:12 Gateway."
    # "team" alone is a generic noun, not a name a moderator would approve (extraction on prose).
    assert {e.name for e in HeuristicExtractor().extract(text).entities} == {"Stripe Gateway"}


def test_words_like_sources_in_a_sentence_are_still_read():
    text = "Source code lives in GitLab. The Resources team uses Jira, and Sourcegraph indexes it."
    names = {e.name for e in HeuristicExtractor().extract(text).entities}
    assert {"GitLab", "Resources team", "Jira", "Sourcegraph"} <= names


def test_cited_ids_are_not_staged_through_the_api(api):
    text = f"{FACT}\nSources:\n- thoughts:{UUID}\n- kge:12\nIt cites [kgo:3f2a] too."
    response = api.post(EXTRACT, {"text": text}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["provider"] == "heuristic"
    staged = set(EntityCandidate.objects.values_list("name", flat=True))
    assert staged == {"Billing API", "Postgres"}


def test_citations_are_not_sent_to_the_cli_or_grok(fake_cli, grok, monkeypatch, tmp_path):
    record = tmp_path / "prompt.txt"
    monkeypatch.setenv("FAKE_CLI_RECORD", str(record))
    fake_cli("fail")
    grok.chat_fn = lambda messages: '{"entities": [], "edges": []}'
    text = f"{FACT} See [thoughts:3f2a].\n**References (2):**\n- thoughts:{UUID}\n- kge:12"
    from kg.extraction import extract

    extract(text)
    sent = [record.read_text(), grok.requests[0]["body"]["messages"][-1]["content"]]
    for prompt in sent:
        assert FACT in prompt
        for leaked in ("thoughts:", "kge:", UUID, "3f2a", "References"):
            assert leaked not in prompt
