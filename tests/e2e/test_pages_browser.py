"""The browsing pages in a real browser (Debian's chromium, never downloaded) against a live
server: thoughts and their chains, search, the knowledge graph after a moderator's approval,
another user's thought, and axe-core on each page (0 serious or critical violations)."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connections

from tests.e2e.conftest import assert_accessible, needs_chromium, sign_in_as
from tests.e2e.screenshots import demo  # noqa: F401  (the demo data, as a fixture)
from tests.kg.factories import EdgeCandidateFactory, EntityCandidateFactory, EntityFactory
from tests.thoughts.factories import ThoughtFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), needs_chromium]
PASSWORD = "correct horse battery"


@pytest.fixture
def token(writer: Any) -> str:
    """An API token for the writer, made before Playwright starts (see ``writer``)."""
    from rest_framework.authtoken.models import Token

    return str(Token.objects.create(user=writer).key)


def think(page: Any, live_server: Any, token: str, **body: Any) -> str:
    response = page.request.post(
        live_server.url + "/api/v1/think",
        headers={"Authorization": f"Token {token}"},
        data=body,
    )
    assert response.status == 201, response.text()
    return str(response.json()["delegated_result"]["thought_id"]).removeprefix("thoughts:")


def test_think_then_find_filter_open_and_follow_the_chain(
    page: Any, live_server: Any, token: str
) -> None:
    # Tags are kept only from THINK_TAG_WHITELIST (plan, debug, dx, photography, idea).
    first = think(page, live_server, token, content="Plan: move billing to the new queue.",
                  tags=["plan"], chain_id="billing-move")  # fmt: skip
    second = think(page, live_server, token, content="Why does the billing deploy fail again?",
                   tags=["plan"], chain_id="billing-move", previous_thought_id=first)  # fmt: skip
    think(page, live_server, token, content="Unrelated idea about gardening.", tags=["idea"])
    sign_in_as(page, live_server, "writer", PASSWORD, "/thoughts/")
    assert page.locator("#timeline .thought-row").count() == 3
    # Newest first.
    assert "gardening" in page.locator("#timeline .thought-row").first.inner_text()
    assert_accessible(page)

    page.click("summary")
    page.fill("#f-tags", "plan")
    page.click("#apply-filters")  # htmx swaps the results in place and keeps the address
    page.wait_for_function("document.querySelectorAll('#timeline .thought-row').length === 2")
    assert "tags=plan" in page.url
    mode = page.locator(f"#row-{first} .badge").inner_text()
    other = "question" if mode != "question" else "debug"
    page.select_option("#f-mode", other)  # a select filters as soon as it changes
    page.wait_for_url(f"**mode={other}**")
    page.wait_for_selector(f"#row-{first}", state="detached")
    assert all(b == other for b in page.locator("#timeline .badge").all_inner_texts())
    page.select_option("#f-mode", "")
    page.wait_for_selector(f"#row-{second}")

    page.click(f"#row-{second} a.open-thought")
    page.wait_for_url(f"**/thoughts/{second}/")
    # The previous thought is named by its words, in the facts and on its circle.
    assert page.locator("#link-previous").inner_text().startswith("Plan: move billing")
    node = page.locator(f'#chain-graph a[data-key="{first}"] text')
    assert (node.text_content() or "").startswith("Plan: move")
    assert page.locator("#mode").inner_text().startswith("question")
    assert page.locator("#mode-reason").inner_text().strip()
    assert page.locator(f'#chain-graph a[data-key="{first}"]').count() == 1
    assert_accessible(page)
    # By keyboard: the node is a link in the tab order, and Enter opens it.
    node = page.locator(f'#chain-graph a[data-key="{first}"]')
    assert node.evaluate("a => a.tabIndex") >= 0
    node.focus()
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/thoughts/{first}/")
    assert "move billing" in page.locator("#content").inner_text()


def test_search_by_meaning_finds_the_nearest_thought(
    page: Any, live_server: Any, writer: Any
) -> None:
    ThoughtFactory(owner=writer, content="The invoice migration locks the billing table.")
    ThoughtFactory(owner=writer, content="Tomatoes need more sun on the balcony.")
    ThoughtFactory(owner=writer, content="Call mum on Sunday.")
    # The factory stores no vectors: embedded by the same provider search uses.
    from django.core.management import call_command

    call_command("reembed", verbosity=0)
    connections.close_all()
    sign_in_as(page, live_server, "writer", PASSWORD, "/thoughts/")
    page.fill("#q", "billing table invoice migration")
    page.click("#search-submit")
    page.wait_for_selector("#search-note")
    first = page.locator("#timeline .thought-row").first
    assert "invoice migration" in first.inner_text()
    assert first.locator(".similarity").count() == 1


def test_delete_asks_then_the_thought_is_gone(page: Any, live_server: Any, writer: Any) -> None:
    gone: Any = ThoughtFactory(owner=writer, content="A thought to delete.")
    sign_in_as(page, live_server, "writer", PASSWORD, f"/thoughts/{gone.pk}/")
    page.click("#delete")
    page.wait_for_selector("#confirm-delete")
    assert_accessible(page)
    page.click("#confirm-delete")
    page.wait_for_url("**/thoughts/")
    assert "The thought was deleted." in page.inner_text("main")
    assert page.goto(f"{live_server.url}/thoughts/{gone.pk}/").status == 404


@pytest.fixture
def someone_elses(transactional_db: None) -> str:
    from django.contrib.auth.models import User

    other = User.objects.create_user("other", password="other-password-1")
    thought: Any = ThoughtFactory(owner=other, content="Not yours to read.")
    return str(thought.pk)


def test_another_users_thought_is_a_404(
    page: Any, live_server: Any, writer: Any, someone_elses: str
) -> None:
    sign_in_as(page, live_server, "writer", PASSWORD, "/thoughts/")
    response = page.goto(f"{live_server.url}/thoughts/{someone_elses}/")
    assert response.status == 404
    assert "Not yours to read." not in page.content()
    # The site's own page, in its design and navigation, with a way back; axe passes it.
    assert page.locator("#error-page h1").inner_text() == "This page is not here"
    assert page.locator("nav[aria-label=Main] a[href='/thoughts/']").count() == 1
    assert page.locator("#error-home").get_attribute("href") == "/"
    assert page.evaluate("getComputedStyle(document.body).fontFamily") != "Times New Roman"
    assert_accessible(page)
    page.set_viewport_size({"width": 375, "height": 800})
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    page.emulate_media(color_scheme="dark")
    page.reload()
    assert_accessible(page)


@pytest.fixture
def pending_edge(transactional_db: None) -> int:
    """A moderator (staff, in "KG moderators"), two entities and a pending edge between them."""
    from django.contrib.auth.models import Group, User

    mod = User.objects.create_user("mod", password="mod-password-1", is_staff=True)
    mod.groups.add(Group.objects.get(name="KG moderators"))
    EntityFactory(name="Billing API", entity_type="service")
    EntityFactory(name="Postgres", entity_type="technology")
    EntityCandidateFactory(name="billing-api", entity_type="service")  # a duplicate, to alias
    candidate: Any = EdgeCandidateFactory(
        source_name="Billing API",
        target_name="Postgres",
        rel_type="depends_on",
        evidence="The Billing API depends on Postgres for its invoices.",
    )
    return int(candidate.pk)


def test_a_moderator_approves_then_opens_the_entity_and_clicks_a_neighbour(
    page: Any, live_server: Any, pending_edge: int
) -> None:
    sign_in_as(page, live_server, "mod", "mod-password-1", "/kg/")
    assert page.locator("#kg-review-link").count() == 1
    assert_accessible(page)
    page.goto(live_server.url + "/")  # the home page counts what waits, and links the queue
    pending = page.locator("#pending-count")
    assert "waiting for review" in pending.inner_text()
    assert pending.get_attribute("href") == "/kg/review/"
    assert_accessible(page)
    # The queue in the site's own design: the candidate beside its sentence, decided in place.
    pending.click()
    page.wait_for_selector("#review-queue")
    row = page.locator(f"#cand-edge-{pending_edge}")
    assert row.locator("blockquote mark").inner_text() == "Billing API"
    assert "depends on Postgres" in row.locator("blockquote").inner_text()
    assert page.locator("link[href*='admin']").count() == 0  # not the admin's look
    assert row.locator("em.relation").inner_text() == "depends on"  # words, not depends_on
    assert_accessible(page)
    # A date wraps whole or not at all: an inline box broken over two lines has two rects.
    whole = "els => els.every(t => t.getClientRects().length === 1)"
    assert page.eval_on_selector_all("#review-queue time", whole)
    page.set_viewport_size({"width": 375, "height": 800})
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    assert page.eval_on_selector_all("#review-queue time", whole)
    assert_accessible(page)
    page.set_viewport_size({"width": 1280, "height": 900})
    duplicate = page.locator("li.candidate", has_text="billing-api")
    billing = duplicate.locator("option", has_text="Billing API (service)").get_attribute("value")
    duplicate.locator("select").select_option(billing)
    duplicate.locator("button[value=alias]").click()
    page.wait_for_selector("li.candidate >> nth=0")
    assert "is now an alias of 'Billing API'" in page.locator(".messages").inner_text()
    assert page.locator("li.candidate", has_text="billing-api").count() == 0
    row.locator("button[value=approve]").click()
    page.wait_for_selector("#review-empty")
    assert (
        "created edge Billing API -[depends_on]-> Postgres"
        in page.locator(".messages").inner_text()
    )

    page.goto(live_server.url + "/kg/")
    page.click("#kg-entities >> text=Billing API")
    page.wait_for_selector("#kg-graph")
    assert "Billing API depends on Postgres" in page.locator("#edges").inner_text()
    assert page.locator("#kg-graph .edge-label").all_text_contents() == ["depends on"]
    assert_accessible(page)
    page.locator("#kg-graph a.node:not(.focus)").first.click()  # the neighbour, by the graph
    page.wait_for_selector("#entity-name")
    assert page.locator("#entity-name").inner_text() == "Postgres"
    # Keyboard: the graph's nodes are links, reached with Tab like any other.
    assert page.eval_on_selector("#kg-graph a.node", "a => a.getAttribute('href')").startswith(
        "/kg/entities/"
    )
    # The graph and the queue in the dark scheme: no violation either.
    page.emulate_media(color_scheme="dark")
    page.reload()  # loaded dark, not caught in Pico's colour transitions
    assert_accessible(page)
    page.goto(live_server.url + "/kg/review/")
    assert_accessible(page)


def test_home_and_the_kg_search_pass_axe_fit_a_phone_and_have_a_dark_scheme(
    page: Any, live_server: Any, writer: Any
) -> None:
    ThoughtFactory(owner=writer, content="A recent thought for the home page.")
    EntityFactory(name="Redis", entity_type="technology")
    page.goto(live_server.url + "/")  # the way in, for anyone
    assert page.locator("#home-sign-in").count() == 1
    assert_accessible(page)
    sign_in_as(page, live_server, "writer", PASSWORD, "/thoughts/")
    page.goto(live_server.url + "/")
    assert "A recent thought" in page.locator("#home-thoughts").inner_text()
    assert_accessible(page)
    page.goto(live_server.url + "/kg/?q=redis")
    assert_accessible(page)
    for path in ("/", "/thoughts/", "/kg/", "/journal/", "/inner-voice/"):
        page.set_viewport_size({"width": 375, "height": 800})
        page.goto(live_server.url + path)
        assert page.evaluate("document.documentElement.scrollWidth") <= 375, path
        assert_accessible(page)
    # The dark scheme (the system's choice) passes too.
    page.set_viewport_size({"width": 1280, "height": 900})
    page.emulate_media(color_scheme="dark")
    for path in ("/", "/thoughts/", "/kg/?q=redis", "/journal/"):
        page.goto(live_server.url + path)
        assert (
            page.evaluate("getComputedStyle(document.body).backgroundColor") != "rgb(255, 255, 255)"
        )
        assert_accessible(page)
    page.click("#sign-out")
    page.goto(live_server.url + "/accounts/login/")
    assert_accessible(page)


@pytest.fixture
def long_chain(writer: Any) -> list[Any]:
    """Six thoughts, each following the one before (made before Playwright starts)."""
    chain: list[Any] = []
    for n in range(6):
        chain.append(
            ThoughtFactory(
                owner=writer,
                content=f"Step {n} of the long migration.",
                chain_id="long",
                previous_thought=chain[-1] if chain else None,
            )
        )
    return chain


def test_a_long_chain_keeps_readable_labels_on_a_phone_and_scrolls_in_its_frame(
    page: Any, live_server: Any, long_chain: list[Any]
) -> None:
    """A graph is drawn at its natural size (never stretched to the column, never shrunk to
    unreadable text): on a phone a long chain scrolls sideways inside its frame, which opens
    on the thought itself, and the page does not widen."""
    focus = long_chain[3]
    sign_in_as(page, live_server, "writer", PASSWORD, f"/thoughts/{focus.pk}/")
    natural = page.eval_on_selector("#chain-graph", "s => Number(s.getAttribute('width'))")
    drawn = page.eval_on_selector("#chain-graph", "s => s.getBoundingClientRect().width")
    assert natural > 375 and abs(drawn - natural) < 1, (natural, drawn)  # desktop: not stretched
    page.set_viewport_size({"width": 375, "height": 800})
    page.goto(f"{live_server.url}/thoughts/{focus.pk}/")
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    assert abs(page.eval_on_selector("#chain-graph", "s => s.getBoundingClientRect().width")
               - natural) < 1  # fmt: skip
    frame = page.locator(".graph-wrap")
    assert frame.evaluate("f => f.scrollWidth > f.clientWidth && f.scrollLeft > 0")
    box, at = frame.bounding_box(), page.locator("#chain-graph .focus circle").bounding_box()
    assert box["x"] <= at["x"] and at["x"] + at["width"] <= box["x"] + box["width"]
    assert_accessible(page)
    page.emulate_media(color_scheme="dark")
    page.reload()  # loaded dark, not caught in Pico's colour transitions
    assert_accessible(page)


@pytest.fixture
def many(writer: Any) -> list[Any]:
    """23 tagged thoughts and one untagged, made before Playwright starts."""
    rows = [
        ThoughtFactory(owner=writer, content=f"Plan step {n}.", tags=["plan"]) for n in range(23)
    ]
    ThoughtFactory(owner=writer, content="Untagged.", tags=[])
    return rows


def test_the_timeline_pages_in_place_and_keeps_its_filter(
    many: list[Any], page: Any, live_server: Any
) -> None:
    sign_in_as(page, live_server, "writer", PASSWORD, "/thoughts/?tags=plan")
    assert page.locator("#timeline .thought-row").count() == 20
    assert "Page 1 of 2" in page.locator("nav.pages").inner_text()
    first = page.locator("#timeline .thought-row").first.inner_text()
    page.click("#next")  # htmx swaps the next page in and puts it in the address
    page.wait_for_url("**page=2**")
    page.wait_for_function("document.querySelectorAll('#timeline .thought-row').length === 3")
    assert "tags=plan" in page.url
    assert "Untagged" not in page.locator("#timeline").inner_text()
    assert first not in page.locator("#timeline").inner_text()
    assert_accessible(page)
    page.click("#previous")
    page.wait_for_function("document.querySelectorAll('#timeline .thought-row').length === 20")


def test_a_new_user_sees_what_to_do_next_on_every_page(page: Any, live_server: Any) -> None:
    """Nothing stored yet: each page says so and where to start, rather than showing an empty
    list or a search over nothing, and passes axe."""
    sign_in_as(page, live_server, "writer", PASSWORD, "/thoughts/")
    assert "No thoughts yet" in page.locator("#no-thoughts").inner_text()
    assert_accessible(page)
    page.goto(live_server.url + "/")
    recent = page.locator("#no-recent")
    assert "journal" in recent.inner_text()
    assert recent.locator("a[href='/journal/']").count() == 1
    assert page.locator("#pending-count").count() == 0  # not a moderator
    assert_accessible(page)
    page.goto(live_server.url + "/kg/")
    assert "moderator approves" in page.locator("#no-entities").inner_text()
    assert page.locator("#kg-review-link").count() == 0
    assert_accessible(page)
    page.goto(live_server.url + "/inner-voice/")
    assert page.locator("#search-form").count() == 0  # nothing to search yet
    assert "ask something above" in page.locator("#no-threads").inner_text()
    assert_accessible(page)


def test_a_bad_filter_is_told_beside_its_field(page: Any, live_server: Any, writer: Any) -> None:
    """A hand-edited address (the form's own checks stop most bad values before they are sent):
    the filters open, the field is marked invalid and its message sits under it."""
    sign_in_as(page, live_server, "writer", PASSWORD, "/thoughts/")
    response = page.goto(live_server.url + "/thoughts/?confidence_gte=high")
    assert response.status == 400
    assert page.locator("#f-conf-min").get_attribute("aria-invalid") == "true"
    message = page.locator("#err-confidence_gte")
    assert message.is_visible() and "valid number" in message.inner_text()
    field, under = page.locator("#f-conf-min").bounding_box(), message.bounding_box()
    assert under["y"] >= field["y"] + field["height"] - 1  # below its own field
    assert "Confidence at least" in page.locator("#error").inner_text()
    assert_accessible(page)


def test_a_thoughts_memories_read_on_a_phone(
    page: Any,
    live_server: Any,
    demo: Any,  # noqa: F811  (the fixture imported above)
) -> None:
    """On a phone each injected memory is a card of labelled facts: why it was chosen is on the
    screen, not in a table's columns scrolled off to the right."""
    from tests.e2e.screenshots import PASSWORD as DEMO_PASSWORD
    from tests.e2e.screenshots import _think

    sign_in_as(page, live_server, "demo", DEMO_PASSWORD, "/thoughts/")
    thought = _think(page, live_server, demo)
    page.set_viewport_size({"width": 375, "height": 800})
    page.goto(live_server.url + thought)
    reasons = page.locator("#memories .memory td.reason")
    assert reasons.count() >= 1
    for n in range(reasons.count()):
        box = reasons.nth(n).bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= 375, box
    label = "td => getComputedStyle(td, '::before').content"
    assert reasons.first.evaluate(label) == '"Why chosen"'  # each fact names itself
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    assert_accessible(page)
