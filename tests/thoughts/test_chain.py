"""GET /api/v1/thoughts/{id}/chain/: the chain as a tree of successors, revisions and branches,
bounded by depth, made only of the viewer's thoughts."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from tests.thoughts.factories_read import ThoughtFactory
from thoughts.models import Thought
from thoughts.selectors import CHAIN_MAX_NODES

pytestmark = pytest.mark.django_db
T0 = datetime(2025, 5, 1, tzinfo=UTC)


def chain(api, thought, **params):
    resp = api.get(f"/api/v1/thoughts/{thought.pk}/chain/", params)
    assert resp.status_code == 200, resp.json()
    return resp.json()


def shape(node) -> dict:
    """A node as {id: {bucket: [...]}} for compact comparisons."""
    out = {}
    for bucket in ("successors", "revisions", "branches"):
        if node[bucket]:
            out[bucket] = [shape(child) for child in node[bucket]]
    return {node["id"]: out}


def at(minutes: int) -> datetime:
    return T0 + timedelta(minutes=minutes)


@pytest.fixture
def tree(user):
    """a → b → c, b' revises b, d branches from b, e follows d."""
    a = ThoughtFactory(owner=user, content="start", created_at=at(0))
    b = ThoughtFactory(owner=user, previous_thought=a, created_at=at(1))
    c = ThoughtFactory(owner=user, previous_thought=b, created_at=at(2))
    b2 = ThoughtFactory(owner=user, revises_thought=b, created_at=at(3))
    d = ThoughtFactory(owner=user, branch_from=b, created_at=at(4))
    e = ThoughtFactory(owner=user, previous_thought=d, created_at=at(5))
    return {"a": a, "b": b, "c": c, "b2": b2, "d": d, "e": e}


def test_chain_is_a_tree_of_successors_revisions_and_branches(api, tree):
    t = {name: str(row.pk) for name, row in tree.items()}
    body = chain(api, tree["c"])
    assert body["focus_id"] == t["c"]
    assert body["ancestors"] == 2
    assert body["truncated"] is False
    assert shape(body["root"]) == {
        t["a"]: {
            "successors": [
                {
                    t["b"]: {
                        "successors": [{t["c"]: {}}],
                        "revisions": [{t["b2"]: {}}],
                        "branches": [{t["d"]: {"successors": [{t["e"]: {}}]}}],
                    }
                }
            ]
        }
    }
    root = body["root"]
    assert root["relation"] == "root"
    assert root["content_preview"] == "start"
    b = root["successors"][0]
    assert [b["relation"], b["revisions"][0]["relation"], b["branches"][0]["relation"]] == [
        "successor",
        "revision",
        "branch",
    ]
    focus = b["successors"][0]
    assert focus["is_focus"] is True
    assert root["is_focus"] is b["is_focus"] is False


def test_the_same_tree_from_any_member(api, tree):
    from_c = chain(api, tree["c"])["root"]
    from_e = chain(api, tree["e"])
    assert shape(from_e["root"]) == shape(from_c)
    assert from_e["ancestors"] == 3  # e → d → b → a
    assert from_e["focus_id"] == str(tree["e"].pk)


def test_depth_bounds_both_directions_and_reports_truncation(api, user):
    line = [ThoughtFactory(owner=user, created_at=at(0))]
    for i in range(1, 7):
        line.append(ThoughtFactory(owner=user, previous_thought=line[-1], created_at=at(i)))
    body = chain(api, line[3], depth=2)
    assert body["ancestors"] == 2
    assert body["truncated"] is True
    node, seen = body["root"], []
    while True:
        seen.append(node["id"])
        if not node["successors"]:
            break
        node = node["successors"][0]
    # Two above the focus, the focus, two below.
    assert seen == [str(t.pk) for t in line[1:6]]
    whole = chain(api, line[3], depth=10)
    assert whole["truncated"] is False
    assert whole["ancestors"] == 3


def test_a_link_to_a_thought_not_written_yet_ends_the_walk(api, user):
    thought = ThoughtFactory(owner=user, previous_thought_id=uuid.uuid4())
    follower = ThoughtFactory(owner=user, previous_thought=thought)
    body = chain(api, thought)
    assert body["ancestors"] == 0
    assert body["root"]["id"] == str(thought.pk)
    assert body["root"]["is_focus"] is True
    assert [n["id"] for n in body["root"]["successors"]] == [str(follower.pk)]


def test_a_thought_with_several_links_appears_once(api, user):
    a = ThoughtFactory(owner=user, created_at=at(0))
    b = ThoughtFactory(owner=user, previous_thought=a, created_at=at(1))
    # c follows b and also branches from a: it is shown once, under its nearest link.
    c = ThoughtFactory(owner=user, previous_thought=b, branch_from=a, created_at=at(2))
    root = chain(api, c)["root"]
    assert root["id"] == str(a.pk)
    assert [n["id"] for n in root["branches"]] == [str(c.pk)]
    assert root["successors"][0]["successors"] == []


def test_a_cycle_of_links_terminates(api, user):
    a = ThoughtFactory(owner=user)
    b = ThoughtFactory(owner=user, previous_thought=a)
    a.previous_thought = b
    a.save(update_fields=["previous_thought"])
    body = chain(api, a)
    ids = [body["root"]["id"], *(n["id"] for n in body["root"]["successors"])]
    assert sorted(ids) == sorted([str(a.pk), str(b.pk)])


def test_long_content_is_previewed(api, user):
    thought = ThoughtFactory(owner=user, content="word " * 200)
    preview = chain(api, thought)["root"]["content_preview"]
    assert len(preview) == 280
    assert preview.endswith("…")


def test_bad_depth_is_a_400_naming_it(api, user):
    thought = ThoughtFactory(owner=user)
    for depth in ("0", "51", "deep"):
        resp = api.get(f"/api/v1/thoughts/{thought.pk}/chain/", {"depth": depth})
        assert resp.status_code == 400
        assert list(resp.json()["fields"]) == ["depth"]


def test_chain_queries_are_bounded_by_depth_not_by_size(api, user, django_assert_max_num_queries):
    root = ThoughtFactory(owner=user, created_at=at(0))
    for i in range(30):  # a wide fan of branches costs one query per level
        ThoughtFactory(owner=user, branch_from=root, created_at=at(i + 1))
    with django_assert_max_num_queries(8):
        body = chain(api, root, depth=3)
    assert len(body["root"]["branches"]) == 30


def test_a_huge_fan_is_cut_at_the_node_limit_and_says_so(api, user):
    root = ThoughtFactory(owner=user, created_at=at(0))
    Thought.objects.bulk_create(
        Thought(owner=user, content=f"branch {i}", branch_from=root) for i in range(CHAIN_MAX_NODES)
    )
    body = chain(api, root, depth=1)
    assert body["truncated"] is True
    assert len(body["root"]["branches"]) == CHAIN_MAX_NODES - 1  # the root is a node too
