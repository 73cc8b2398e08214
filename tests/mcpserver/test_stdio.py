"""The MCP server over stdio, driven by the SDK's own client spawning ``manage.py mcp``."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from mcp import Client

from tests.support.mcp_client import ROOT, server_env, stdio_params, with_client

pytestmark = pytest.mark.django_db(transaction=True)

ORIGINAL_TOOLS = {
    "legacymind_think", "legacymind_search", "inner_voice", "memories_create",
    "memories_moderate", "maintenance_ops", "detailed_help",
}  # fmt: skip
DROP_INS = {
    "create_entities", "create_relations", "add_observations", "delete_entities",
    "delete_observations", "delete_relations", "read_graph", "search_nodes", "open_nodes",
}  # fmt: skip


def test_without_a_user_the_command_refuses_to_start_with_one_line():
    env = server_env()
    env.pop("LEGACYMIND_MCP_USER", None)
    done = subprocess.run(
        [sys.executable, "manage.py", "mcp"], cwd=ROOT, env=env, capture_output=True,
        text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode != 0
    assert done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        "CommandError: No user: pass --user NAME or set LEGACYMIND_MCP_USER."
    ]


def test_tools_are_listed_with_schemas_and_hints(user):
    async def session(client: Client):
        return (await client.list_tools()).tools

    tools = {tool.name: tool for tool in with_client(stdio_params(user), session)}
    assert set(tools) >= ORIGINAL_TOOLS | DROP_INS
    search = tools["legacymind_search"]
    assert search.input_schema["additionalProperties"] is False
    assert search.input_schema["properties"]["top_k_memories"]["default"] == 10
    assert search.input_schema["required"] == ["query"]
    assert search.annotations.read_only_hint is True
    assert search.output_schema["properties"]["memories"]["type"] == "object"
    think = tools["legacymind_think"].input_schema["properties"]
    assert {"content", "injection_scale", "previous_thought_id", "verify_top_k"} <= set(think)
    assert tools["delete_entities"].annotations.destructive_hint is True
    assert tools["create_entities"].annotations.idempotent_hint is True


def _ok(result):
    assert not result.is_error, result.content[0].text
    assert result.structured_content is not None
    assert result.content[0].type == "text"
    return result.structured_content


def test_every_tool_answers_over_stdio_as_the_user(user, moderator):
    user.is_staff = True
    user.save(update_fields=["is_staff"])

    async def session(client: Client):
        out = {}
        out["think"] = _ok(
            await client.call_tool(
                "legacymind_think",
                {"content": "Postgres keeps the billing ledgers", "tags": ["plan"]},
            )
        )
        out["search"] = _ok(
            await client.call_tool(
                "legacymind_search", {"query": "billing ledgers", "include_thoughts": True}
            )
        )
        out["voice"] = _ok(
            await client.call_tool(
                "inner_voice",
                {
                    "query": "Where do the ledgers live?",
                    "new_thread": "ledgers",
                    "auto_extract_to_kg": False,
                    "close_thread": True,
                },
            )
        )
        out["create"] = _ok(
            await client.call_tool(
                "memories_create",
                {"kind": "entity", "data": {"name": "Ledger", "entity_type": "concept"}},
            )
        )
        out["entities"] = _ok(
            await client.call_tool(
                "create_entities",
                {
                    "entities": [
                        {
                            "name": "Billing",
                            "entityType": "service",
                            "observations": ["runs nightly"],
                        }
                    ]
                },
            )
        )
        out["relations"] = _ok(
            await client.call_tool(
                "create_relations",
                {"relations": [{"from": "Billing", "to": "Ledger", "relationType": "writes"}]},
            )
        )
        out["observe"] = _ok(
            await client.call_tool(
                "add_observations", {"observations": [{"entityName": "Billing", "contents": ["x"]}]}
            )
        )
        out["graph"] = _ok(await client.call_tool("read_graph", {"limit": 10}))
        out["nodes"] = _ok(await client.call_tool("search_nodes", {"query": "Billing service"}))
        out["open"] = _ok(await client.call_tool("open_nodes", {"names": ["Billing", "Ledger"]}))
        for name, args in [
            (
                "delete_observations",
                {"deletions": [{"entityName": "Billing", "observations": ["x"]}]},
            ),
            (
                "delete_relations",
                {"relations": [{"from": "Billing", "to": "Ledger", "relationType": "writes"}]},
            ),
            ("delete_entities", {"entityNames": ["Billing"]}),
        ]:
            out[name] = _ok(await client.call_tool(name, args))
        out["health"] = _ok(
            await client.call_tool("maintenance_ops", {"operation": "health_check_embeddings"})
        )
        out["reembed"] = _ok(
            await client.call_tool("maintenance_ops", {"operation": "reembed_kg", "dry_run": True})
        )
        out["help"] = _ok(await client.call_tool("detailed_help", {"tool": "inner_voice"}))
        thought_id = out["think"]["delegated_result"]["thought_id"]
        out["resource"] = await client.read_resource(f"legacymind://thoughts/{thought_id}")
        return out

    out = with_client(stdio_params(user), session)
    assert out["think"]["mode_selected"]
    assert (
        out["search"]["thoughts"]["results"][0]["content"] == "Postgres keeps the billing ledgers"
    )
    assert out["voice"]["answer"] and out["voice"]["thread_closed"] is True
    # alice is no moderator: her KG writes wait for the moderators, each item says so.
    assert out["create"]["status"] == "pending"
    assert [r["status"] for r in out["entities"]["results"]] == ["pending"]
    assert [r["status"] for r in out["relations"]["results"]] == ["pending"]
    # Her observations wait too, even on an entity still pending, and her reads show them.
    assert out["observe"]["results"][0]["status"] == "pending"
    pending = {e["name"]: e.get("status") for e in out["graph"]["entities"]}
    assert pending == {"Ledger": "pending", "Billing": "pending"}
    billing = next(e for e in out["graph"]["entities"] if e["name"] == "Billing")
    assert billing["observations"] == [] and billing["pendingObservations"] == ["runs nightly", "x"]
    assert out["open"]["entities"][0]["status"] == "pending"
    assert out["open"]["relations"] == [
        {"from": "Billing", "to": "Ledger", "relationType": "writes", "status": "pending"}
    ]
    assert [e["name"] for e in out["nodes"]["entities"]] == ["Billing"]
    assert "refused" in out["delete_entities"]["results"][0]["status"]
    assert "kg_entities" in out["health"]["tables"]
    assert out["reembed"]["dry_run"] is True
    assert out["help"]["tools"][0]["name"] == "inner_voice"
    assert "Postgres keeps the billing ledgers" in out["resource"].contents[0].text


def test_bad_calls_are_tool_errors_that_name_the_field(user, other_user):
    from thoughts.models import Thought

    theirs = Thought.objects.create(owner=other_user, content="bob's secret plan")

    async def session(client: Client):
        typo = await client.call_tool("legacymind_search", {"query": "x", "top_k_memory": 3})
        bad = await client.call_tool("memories_create", {"kind": "entiti", "data": {}})
        moderate = await client.call_tool("memories_moderate", {"action": "review"})
        foreign = await client.call_tool(
            "legacymind_think", {"content": "next", "previous_thought_id": str(theirs.id)}
        )
        try:
            await client.read_resource(f"legacymind://thoughts/{theirs.id}")
            resource = None
        except Exception as exc:  # the SDK raises the server's error
            resource = str(exc)
        return typo, bad, moderate, foreign, resource

    typo, bad, moderate, foreign, resource = with_client(stdio_params(user), session)
    assert typo.is_error and "top_k_memory" in typo.content[0].text
    assert "Did you mean top_k_memories?" in typo.content[0].text
    assert bad.is_error and "kind" in bad.content[0].text
    assert "kind: did you mean entity?" in bad.content[0].text
    assert moderate.is_error and "moderators" in moderate.content[0].text
    # Another user's thought is not linked to, nor readable: it is as if it did not exist (a
    # forward link to an unknown id, as over REST).
    assert not foreign.is_error
    telemetry = foreign.structured_content["telemetry"]["links_telemetry"]
    assert telemetry["previous_thought_id"] == "string"
    assert resource is not None and "bob's secret plan" not in resource
    assert "Resource not found" in resource


def test_inner_voice_command_answers_from_a_terminal_and_stores_no_question(user):
    question = "Which QZXV harbour crane broke first?"
    env = server_env()
    done = subprocess.run(
        [sys.executable, "manage.py", "inner_voice", question, "--user", user.username,
         "--new-thread", "cranes", "--json"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["answer"] and answer["thread"]["topic"] == "cranes"
    assert answer["synth_thought_id"].startswith("thoughts:")
    from thoughts.models import Thought

    assert not Thought.objects.filter(content__contains="QZXV").exists()
    assert "QZXV" not in done.stderr
    plain = subprocess.run(
        [sys.executable, "manage.py", "inner_voice", "and then?", "--user", user.username],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert plain.returncode == 0, plain.stderr
    assert "Sources:" in plain.stdout and "Thread: cranes" in plain.stdout


def test_a_long_reembed_reports_progress_to_a_staff_user(user):
    from kg.models import Entity

    user.is_staff = True
    user.save(update_fields=["is_staff"])
    Entity.objects.bulk_create(Entity(name=f"unembedded {i}") for i in range(5))
    seen: list[tuple[float, float | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, total))

    async def session(client: Client):
        return await client.call_tool(
            "maintenance_ops", {"operation": "reembed_kg"}, progress_callback=progress
        )

    result = with_client(stdio_params(user), session)
    assert not result.is_error, result.content[0].text
    assert result.structured_content["rows"] == 5
    assert result.structured_content["remaining"] == 0
    assert seen and seen[-1][0] == 5
    assert Entity.objects.filter(embedding_dim__isnull=True).count() == 0
