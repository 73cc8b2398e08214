"""The confidence reported with a confirmed crux: how likely its statement fits the writer's crux.

The posterior says how likely the leading hypothesis *is* the writer's crux, one archetype among
the catalogue. What the writer gets is that archetype's statement, and a statement can fit a
crux it was not written for: the catalogue is coarse, and a neighbouring archetype often says the
same thing in other words. So the reported confidence is

    P(statement fits) = fit_same · p(top) + fit_other · (1 - p(top))

with ``fit_same`` the rate at which a hypothesis' statement fits when it is the writer's
archetype and ``fit_other`` the rate when it is not (OTHER included). Both are frequencies measured
on the dev set by bench/crux.py (which also reports the figures with them measured on the other
items only); they are settings, not code. The stop rule still reads the posterior (spec 004 §4):
this only changes what is reported.
"""

from __future__ import annotations

from django.conf import settings


def reported_confidence(posterior: float) -> float:
    """What the writer is told for a hypothesis the beliefs give ``posterior``."""
    same, other = settings.AGENT_FIT_SAME, settings.AGENT_FIT_OTHER
    return same * posterior + other * (1.0 - posterior)
