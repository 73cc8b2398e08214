"""``kg_extract`` run again continues past the thoughts it already extracted (F4), and names
the valid origins when given another."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from kg.models import EntityCandidate, ThoughtExtraction
from tests.kg.factories import ThoughtFactory

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = StringIO()
    call_command("kg_extract", *args, stdout=out, stderr=StringIO())
    return out.getvalue()


def test_a_second_run_takes_the_next_thoughts_instead_of_the_same_oldest_ones():
    first = ThoughtFactory(content="FastAPI uses Pydantic.")
    second = ThoughtFactory(content="Kibana reads logs from Elasticsearch.")
    third = ThoughtFactory(content="Ada Lovelace met Charles Babbage.")

    assert "Extracted 1 of 1 thought(s)." in run("--limit", "1")
    assert "Extracted 1 of 1 thought(s)." in run("--limit", "1")
    assert "Extracted 1 of 1 thought(s)." in run("--limit", "1")

    staged_by = set(EntityCandidate.objects.values_list("staged_by_thought_id", flat=True))
    assert staged_by == {first.id, second.id, third.id}
    assert "already extracted (--redo to redo them)" in run("--limit", "1")


def test_a_thought_that_staged_nothing_new_is_not_taken_again():
    ThoughtFactory(content="FastAPI uses Pydantic.")
    repeat = ThoughtFactory(content="FastAPI uses Pydantic.")  # only identities already pending

    out = run()

    assert "staged 2 entities and 1 edges" in out
    assert not EntityCandidate.objects.filter(staged_by_thought=repeat).exists()
    assert ThoughtExtraction.objects.filter(thought=repeat).exists()
    assert "Extracted 0 of 0 thought(s)." in run()


def test_redo_and_explicit_ids_take_extracted_thoughts_again():
    thought = ThoughtFactory(content="FastAPI uses Pydantic.")
    run()

    assert "Extracted 1 of 1 thought(s)." in run("--redo")
    assert "Extracted 1 of 1 thought(s)." in run("--all")  # the same option, reembed's name
    assert "Extracted 1 of 1 thought(s)." in run("--thought", str(thought.id))


def test_a_dry_run_previews_and_records_nothing():
    ThoughtFactory(content="FastAPI uses Pydantic.")

    assert "Extracted 1 of 1 thought(s) (dry run" in run("--dry-run")

    assert not ThoughtExtraction.objects.exists()
    assert "Extracted 1 of 1 thought(s)." in run()


def test_an_unknown_origin_is_an_error_listing_the_valid_ones():
    ThoughtFactory(content="FastAPI uses Pydantic.", origin="human")

    with pytest.raises(CommandError) as excinfo:
        run("--origin", "bogus")

    message = str(excinfo.value)
    assert "--origin 'bogus' is not one of" in message
    assert all(name in message for name in ("human", "tool", "inner_voice", "journal"))
    assert not ThoughtExtraction.objects.exists()


def test_help_says_a_run_continues_where_the_last_stopped(capsys):
    with pytest.raises(SystemExit):
        call_command("kg_extract", "--help")
    text = " ".join(capsys.readouterr().out.split())
    assert "not extracted yet" in text and "--redo" in text
