"""``make screenshots``: every page, at a desktop and a phone width, from a live server with
the demo data (``seed_demo``), saved as ``docs/screenshots/<page>-<width>.png``; the key pages
again in the dark scheme (the system's ``prefers-color-scheme: dark``), as
``<page>-<width>-dark.png``; and the
journal's final crux screen for five entries written for it (not from the crux fixtures), saved
as ``docs/screenshots/journal-crux-<n>-<theme>-desktop.png`` (``-k crux_screens`` alone).

Not a test (pytest collects only ``test_*.py``): it is run by name, with the browser tests'
live server and chromium (tests/e2e/conftest.py)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from tests.e2e.conftest import ENTRY, answer, needs_chromium, sign_in, sign_in_as

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), needs_chromium]

OUT = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
WIDTHS = {"desktop": (1280, 900), "phone": (375, 812)}
# Shown again in the dark scheme: a page of each kind (lists, a graph, the journal's end, the
# inner voice's answer, the review queue).
DARK = (
    "home",
    "thoughts",
    "thought",
    "entity",
    "journal-crux",
    "inner-voice-thread",
    "review-queue",
)
PASSWORD = "demo-screenshots-1"


@pytest.fixture
def demo(transactional_db: None) -> dict[str, str]:
    """The demo data, its user able to sign in and moderate, and the addresses worth showing."""
    from django.contrib.auth.models import Group, User
    from django.db.models import Count

    from kg.models import Entity
    from thoughts.demo import demo_thought_id

    call_command("seed_demo", verbosity=0)
    user = User.objects.get(username="demo")
    user.set_password(PASSWORD)
    user.is_staff = True
    user.save()
    user.groups.add(Group.objects.get(name="KG moderators"))
    from rest_framework.authtoken.models import Token

    # The entity with the most to show: observations first, then connections.
    busiest = Entity.objects.annotate(
        o=Count("observations", distinct=True),
        n=Count("edges_out", distinct=True) + Count("edges_in", distinct=True),
    ).order_by("-o", "-n", "name")[0]
    return {
        "previous": str(demo_thought_id("checkout-3")),
        "entity": f"/kg/entities/{busiest.pk}/",
        "token": Token.objects.create(user=user).key,
    }


def _think(page: Any, live_server: Any, demo: dict[str, str]) -> str:
    """A thought made through the API, as an agent makes one: the think pipeline injects the
    KG's memories into it (the demo's own thoughts were stored without that step), so its page
    shows memories with their receipts as well as its place in the chain."""
    response = page.request.post(
        live_server.url + "/api/v1/think",
        headers={"Authorization": f"Token {demo['token']}"},
        data={
            "content": "Next: cap the session payload the serializer writes to the session "
            "store, then measure the cart-service checkout latency again.",
            "chain_id": "demo-chain-checkout",
            "session_id": "demo-session-1",
            "previous_thought_id": demo["previous"],
            "tags": ["debug"],
        },
    )
    assert response.status == 201, response.text()
    thought_id = str(response.json()["delegated_result"]["thought_id"])
    return f"/thoughts/{thought_id.removeprefix('thoughts:')}/"


def _ask_inner_voice(page: Any, live_server: Any) -> str:
    """One exchange with the inner voice (the offline composer: no chat model), so its pages
    and the home page show a thread rather than their empty states."""
    page.goto(live_server.url + "/inner-voice/")
    page.fill("#query", "Why did checkout get slow after the deploy?")
    page.fill("#topic", "checkout latency")
    page.click("#ask")
    page.wait_for_selector("#exchange-1")
    return str(page.url.removeprefix(live_server.url))


def _journal_question(page: Any) -> None:
    page.fill("#entry", ENTRY)
    page.click("#start")
    page.wait_for_selector("#question-form", state="attached")
    if page.locator("#continue").is_visible():
        page.click("#continue")


def _journal_crux(page: Any) -> None:
    """The final screen: the crux, the secondary themes, the entry's cited sentences."""
    _journal_question(page)
    for _ in range(6):
        if page.query_selector("#result"):
            break
        answer(page, page.locator("button.option").first)  # htmx swaps the turn in
    page.wait_for_selector("#result")


# Five entries in five voices, each with the words its writer would recognise in an option: the
# screen shows whether the crux speaks to that writer, so each plays as a writer who knows it.
CRUX_ENTRIES = [
    (
        "grief",
        "Cleared out Dad's shed today with Marek. His reading glasses were still on the "
        "workbench next to a half-fixed radio. Marek wanted to bin the radio. I kept it. I "
        "couldn't explain why, only that Dad was going to finish it and now nobody will. It's "
        "been a year and every Sunday at six I still reach for the phone to ring him.",
        ("dad", "lost", "miss", "gone", "radio"),
    ),
    (
        "boundaries",
        "Said yes to covering Lena's Saturday shift again. It was my only day off this week. "
        "She didn't even ask properly, just 'you don't mind, right?' and I heard myself say of "
        "course. Then I said yes to Omar's spreadsheet too. I spent the evening furious, mostly "
        "at myself, because I never say no to anyone.",
        ("no", "yes", "say"),
    ),
    (
        "perfectionism",
        "Rewrote the first paragraph of the grant report eleven times today. Yusuf read the "
        "draft on Tuesday and said it was fine, send it. It is Friday and it is still sitting "
        "in my outbox because one sentence sounds clumsy. If it is not exactly right I would "
        "rather it did not go at all, which is ridiculous, the deadline is Monday.",
        ("right", "perfect", "flaw", "exactly"),
    ),
    (
        "career",
        "Twelve years running the lab at St Anne's and today they announced the merger. At "
        "lunch everyone asked what I would do if my role disappeared. I had no answer. Being "
        "the one who runs the lab is most of how I describe myself, and I cannot picture a "
        "Monday that isn't that.",
        ("myself", "work", "job", "lab", "role"),
    ),
    (
        "loneliness",
        "Three months in Leeds now. The flat is nice, work is fine. But on Saturday I realised I "
        "had not spoken to anyone out loud since the Thursday standup. I rang Mum just to hear "
        "a voice and pretended it was about the boiler. Nobody here would notice if I stayed "
        "in all weekend.",
        ("alone", "nobody", "lonely", "noticed", "notice"),
    ),
]


def _journal_crux_for(page: Any, entry: str, recognises: tuple[str, ...]) -> None:
    """Play ``entry`` to its final screen, picking the option that names what the writer
    recognises (the first option when none does)."""
    page.fill("#entry", entry)
    page.click("#start")
    page.wait_for_selector("#question-form, #result", state="attached")
    if page.locator("#continue").is_visible():
        page.click("#continue")
    for _ in range(6):
        if page.query_selector("#result"):
            break
        options = page.locator("button.option")
        texts = [t.lower() for t in options.all_inner_texts()]
        pick = next(
            (
                i
                for i, t in enumerate(texts)
                if not t.startswith("not sure")
                and any(re.search(rf"\b{re.escape(w)}\b", t) for w in recognises)
            ),
            0,
        )
        answer(page, options.nth(pick))
    page.wait_for_selector("#result")


def _reflect(page: Any) -> None:
    page.fill("#entry", ENTRY)
    page.click("#reflect")
    page.wait_for_selector("#reflection")


def test_screenshots(page: Any, live_server: Any, demo: dict[str, str]) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    sign_in_as(page, live_server, "demo", PASSWORD, "/thoughts/")
    thought = _think(page, live_server, demo)
    thread = _ask_inner_voice(page, live_server)
    shots: list[tuple[str, str, Callable[[Any], None] | None]] = [
        ("home", "/", None),
        ("thoughts", "/thoughts/", None),
        ("thought", thought, None),
        ("kg", "/kg/", None),
        ("entity", demo["entity"] + "?depth=2", None),
        ("journal", "/journal/", _journal_question),
        ("journal-crux", "/journal/", _journal_crux),
        ("reflect", "/journal/", _reflect),
        ("inner-voice", "/inner-voice/", None),
        ("inner-voice-thread", thread, None),
        ("review-queue", "/kg/review/", None),
        # The site's own error page: a thought that is not there (or not yours).
        ("not-found", "/thoughts/00000000-0000-0000-0000-000000000000/", None),
    ]
    written = []
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        for name, path, then in shots:
            if scheme == "dark" and name not in DARK:
                continue
            for width, (w, h) in WIDTHS.items():
                page.set_viewport_size({"width": w, "height": h})
                page.goto(live_server.url + path)
                if then is not None:
                    then(page)
                suffix = "-dark" if scheme == "dark" else ""
                out = OUT / f"{name}-{width}{suffix}.png"
                page.screenshot(path=str(out), full_page=True)
                written.append(out)
    assert len(written) == (len(shots) + len(DARK)) * len(WIDTHS)


def test_crux_screens(page: Any, live_server: Any, settings: Any) -> None:
    """The journal's final screen for each of CRUX_ENTRIES, desktop width, with the local
    embedding model the agent runs with (the tests' hash provider would seed nonsense)."""
    from legacymind.providers import embeddings

    settings.EMBEDDING_PROVIDER = "local"
    settings.AGENT_CRUX_MODEL = "off"  # the default install: no chat model, the offline composer
    embeddings._cached.cache_clear()
    embeddings.get_provider().embed(["loaded before the first click, not during it"])
    page.set_default_timeout(120_000)  # a turn embeds with the model, on shared cores
    OUT.mkdir(parents=True, exist_ok=True)
    sign_in(page, live_server)
    page.set_viewport_size({"width": 1280, "height": 900})
    written = []
    for n, (theme, entry, recognises) in enumerate(CRUX_ENTRIES, start=1):
        page.goto(live_server.url + "/journal/")
        _journal_crux_for(page, entry, recognises)
        path = OUT / f"journal-crux-{n}-{theme}-desktop.png"
        page.screenshot(path=str(path), full_page=True)
        written.append(path)
    assert all(p.stat().st_size > 0 for p in written)
