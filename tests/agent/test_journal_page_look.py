"""The journal's question as a reader sees it: the way out ("Not sure / something else") is
there but quieter than the cruxes it stands beside."""

from __future__ import annotations

import re

from tests.agent.conftest import BOUNDARIES_ENTRY


def test_not_sure_is_a_quieter_option_than_the_cruxes(client):
    page = client.post("/journal/act", {"entry": BOUNDARIES_ENTRY}).content.decode()
    found = re.findall(r'<button type="submit" name="value" value="([^"]*)" class="([^"]*)"', page)
    buttons = [(value, classes) for value, classes in found if classes.startswith("option")]
    assert len(buttons) >= 2
    quiet = [value for value, classes in buttons if "secondary outline" in classes]
    assert [v.lower()[:8] for v in quiet] == ["not sure"]
    others = [classes for value, classes in buttons if value not in quiet]
    assert all(classes == "option" for classes in others), buttons


def test_a_cited_span_is_marked_without_its_surrounding_spaces():
    """The engine may cut a span with the space before it (" and then I'm annoyed"): the mark
    starts at the first word, not on a highlighted blank."""
    from django.template.loader import render_to_string

    crux = {"text": "You never hold the line.", "evidence_spans": [" and then I hold no line. "]}
    theme = {"text": "Approval.", "evidence_spans": [" every time she asks"]}
    result = {"exit_reason": "confident", "confirmed_crux": crux, "secondary_themes": [theme]}
    response = {"safety": {"level": "none"}, "state": {}}
    page = render_to_string("agent/_journal.html", {"result": result, "response": response})
    assert "<li><mark>and then I hold no line.</mark></li>" in page
    assert "<mark>every time she asks</mark>" in page
