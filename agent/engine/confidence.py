"""The confidence reported with a confirmed crux: the probability that the crux is right.

The posterior says how likely the leading hypothesis *is* the writer's crux, one archetype among
the catalogue. What the writer gets is a crux composed from that archetype's frame and the
entry's own sentences, and such a crux can be right for a writer whose archetype is another:
it quotes what they wrote, and a neighbouring archetype often says the same thing in other
words. So the reported confidence is

    P(crux right) = fit_same · p(top) + fit_other · (1 - p(top))

with ``fit_same`` the rate at which the crux is right when its archetype is the writer's and
``fit_other`` the rate when it is not (OTHER included). Both were fitted by maximum likelihood
to the FACD plays of the train writers only (tests/agent/fixtures/crux/writer_01..04,
``bench/crux.py --rows ... --fit-confidence``), never to the held-out writers; they are settings,
not code. Left out one writer at a time on train, this two-number mapping was as well
calibrated as Platt scaling of the posterior's log-odds (docs/benchmarks.md, crux section).
The stop rule still reads the posterior (spec 004 §4): this only changes what is reported.
"""

from __future__ import annotations

from django.conf import settings


def reported_confidence(posterior: float) -> float:
    """What the writer is told for a hypothesis the beliefs give ``posterior``."""
    same, other = settings.AGENT_FIT_SAME, settings.AGENT_FIT_OTHER
    return same * posterior + other * (1.0 - posterior)
