"""The invented-names check (agent/engine/compose.py) counts a name the entry uses as used, also
when the crux quotes it with its closing quote."""

from __future__ import annotations

from agent.engine.compose import invented_names


def test_a_quoted_name_of_the_entry_is_not_invented() -> None:
    entry = "She only said 'Mia' once, then the House' sign came down."
    assert invented_names("You kept hearing 'Mia' and the House' sign.", entry) == []


def test_a_name_the_entry_never_uses_is_invented() -> None:
    entry = "She only said 'Mia' once."
    assert invented_names("You kept hearing 'Mia' and thinking of Omar.", entry) == ["Omar"]
