"""Parameter validation through POST /api/v1/think: defaults, clamping, tags, size limit."""

from __future__ import annotations

import pytest

from thoughts.models import Thought

pytestmark = pytest.mark.django_db

URL = "/api/v1/think"


def think(api, **payload):
    return api.post(URL, payload, format="json")


def test_content_is_required_and_nothing_is_stored(api):
    r = think(api, hint="question")
    assert r.status_code == 400
    assert r.json()["error_code"] == "invalid"
    assert "content" in r.json()["fields"]
    assert Thought.objects.count() == 0


@pytest.mark.parametrize("content", [123, 1.5, True, ["a thought"], {"text": "a thought"}])
def test_content_that_is_not_a_string_is_a_400_and_nothing_is_stored(api, content):
    r = think(api, content=content)
    assert r.status_code == 400, r.content
    assert r.json()["fields"]["content"] == ["Not a valid string."]
    assert Thought.objects.count() == 0


def test_blank_content_is_rejected(api):
    r = think(api, content="   \n ")
    assert r.status_code == 400
    assert r.json()["fields"]["content"] == ["must not be empty"]
    assert Thought.objects.count() == 0


def test_content_up_to_100_kb_is_accepted(api):
    r = think(api, content="a" * (100 * 1024), injection_scale=0)
    assert r.status_code == 201, r.json()
    assert len(Thought.objects.get().content) == 100 * 1024


def test_content_over_100_kb_is_a_400_and_stores_nothing(api):
    # 102,399 characters but 102,401 bytes: the limit counts UTF-8 bytes, like the original.
    r = think(api, content="a" * (100 * 1024 - 1) + "é")
    assert r.status_code == 400
    assert r.json()["error_code"] == "content_too_large"
    assert "content" in r.json()["fields"]
    assert Thought.objects.count() == 0


@pytest.mark.parametrize(
    ("field", "given", "used"),
    [
        ("injection_scale", 7, 3),
        ("injection_scale", -2, 0),
        ("injection_scale", "2", 2),
        ("injection_scale", 0.5, 1),
        ("injection_scale", 1.5, 2),
        ("injection_scale", "2.5", 3),
        ("significance", 1.7, 1.0),
        ("significance", "-0.3", 0.0),
        ("significance", "0.25", 0.25),
    ],
)
def test_numbers_are_lenient_and_clamped_into_range(api, field, given, used):
    r = think(api, content="Notes on a quiet evening", **{field: given})
    assert r.status_code == 201, r.json()
    thought = Thought.objects.get()
    assert getattr(thought, field) == used
    assert r.json()["telemetry"][field] == used
    if used != float(given):
        assert r.json()["telemetry"]["clamped"][field] == {"given": float(given), "used": used}


def test_confidence_is_clamped_and_stored(api):
    r = think(api, content="Fairly sure about this", confidence="1.5")
    assert r.status_code == 201
    assert Thought.objects.get().confidence == 1.0
    assert r.json()["links"]["confidence"] == 1.0


def test_verification_numbers_are_clamped(api):
    r = think(
        api,
        content="Checking a claim",
        hypothesis="Caching fixed the latency",
        needs_verification=True,
        verify_top_k=10_000,
        evidence_limit=0,
        min_similarity="2",
    )
    assert r.status_code == 201, r.json()
    tel = r.json()["verification"]["telemetry"]
    assert (tel["top_k"], tel["evidence_limit"], tel["min_similarity"]) == (500, 1, 1.0)
    assert set(r.json()["telemetry"]["clamped"]) == {
        "verify_top_k",
        "evidence_limit",
        "min_similarity",
    }


@pytest.mark.parametrize("bad", ["lots", True, [1], {"a": 1}, "nan", "1e400", 10**400, -(10**400)])
def test_a_value_that_is_not_a_number_is_a_400(api, bad):
    r = think(api, content="hello", significance=bad)
    assert r.status_code == 400
    assert "significance" in r.json()["fields"]
    assert Thought.objects.count() == 0


def test_tags_are_filtered_against_the_whitelist_and_dropped_ones_reported(api):
    r = think(
        api, content="Shooting at golden hour", tags=["Photography", "idea", "secret", "idea"]
    )
    assert r.status_code == 201
    assert Thought.objects.get().tags == ["photography", "idea"]
    assert r.json()["telemetry"]["tags_dropped"] == ["secret"]


def test_tag_whitelist_comes_from_settings(api, settings):
    settings.THINK_TAG_WHITELIST = ["journal"]
    r = think(api, content="Dear diary", tags=["journal", "plan"])
    assert Thought.objects.get().tags == ["journal"]
    assert r.json()["telemetry"]["tags_dropped"] == ["plan"]


def test_tags_must_be_a_list_of_strings(api):
    r = think(api, content="x y z", tags="plan")
    assert r.status_code == 400
    assert "tags" in r.json()["fields"]


def test_unknown_submode_is_a_400(api):
    r = think(api, content="x y z", submode="grumpy")
    assert r.status_code == 400
    assert "submode" in r.json()["fields"]


def test_overlong_session_id_is_a_400(api):
    r = think(api, content="x y z", session_id="s" * 129)
    assert r.status_code == 400
    assert "session_id" in r.json()["fields"]


def test_think_needs_authentication(anon_api):
    r = anon_api.post(URL, {"content": "hello"}, format="json")
    assert r.status_code in (401, 403)
    assert r.json()["error_code"] in ("not_authenticated", "permission_denied")
    assert Thought.objects.count() == 0
