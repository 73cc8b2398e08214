"""What the operator reads agrees with the code (F13, F14): the pgvector minimum, the port
compose's ensure_superuser prints, the demo data's owner, and help without internal names."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest
import yaml
from django.core.management import call_command

ROOT = Path(__file__).resolve().parents[2]


def test_readme_and_env_example_give_the_pgvector_minimum_migrate_enforces():
    migration = importlib.import_module("legacymind.migrations.0002_vector_extension_update")
    minimum = ".".join(map(str, migration.MIN_VERSION))
    example = (ROOT / ".env.example").read_text()
    readme = " ".join((ROOT / "README.md").read_text().split())

    assert re.findall(r"pgvector >= ([\d.]+)", example) == [minimum]
    assert f"pgvector {minimum} or later" in readme
    assert f"{minimum} is the minimum" in readme


def test_compose_ensure_superuser_prints_the_published_port():
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    web = compose["services"]["web"]

    assert web["environment"]["PORT"] == "${WEB_PORT:-8000}"
    assert web["ports"][0].startswith("${WEB_PORT:-8000}:")


def test_readme_says_whose_the_demo_data_is_and_where_to_see_it():
    readme = " ".join((ROOT / "README.md").read_text().split())

    assert "The demo data belongs to a user `demo`" in readme
    assert "sign in at `/admin/`, which shows every user's thoughts" in readme


def test_kg_moderate_help_names_no_internal_function(capsys):
    with pytest.raises(SystemExit):
        call_command("kg_moderate", "--help")
    text = capsys.readouterr().out
    assert "memories_moderate" not in text
    assert "moderation queue" in text


def test_readme_mcp_block_parses_and_lists_every_tool_the_server_has():
    import json

    import mcpserver.tools  # noqa: F401  (registers the tools)
    from mcpserver.registry import TOOLS

    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## Use it from an AI agent (MCP)") :]
    block = section[section.index("```json") + len("```json") : section.index("```\n", 10)]
    server = json.loads(block)["mcpServers"]["legacymind"]
    assert server["args"][1:3] == ["mcp", "--user"]
    listed = set(re.findall(r"`([a-z_]+)`", section[section.index("| tools |") :]))
    assert set(TOOLS) <= listed
