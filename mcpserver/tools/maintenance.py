"""``maintenance_ops`` (the reembed command's service) and ``detailed_help``."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from rest_framework import serializers

from legacymind.api.inputs import Input
from legacymind.vectors.reembed import rows_reembed
from mcpserver.registry import TOOLS, Call, Tool, register, tool_find

# The original's operations and the tables each one covers.
OPERATIONS = {"health_check_embeddings": "all", "reembed": "thoughts", "reembed_kg": "kg"}


class MaintenanceInput(Input):
    operation = serializers.ChoiceField(choices=list(OPERATIONS))
    dry_run = serializers.BooleanField(
        default=False, help_text="Count what would be embedded; write nothing."
    )
    limit = serializers.IntegerField(
        min_value=1, required=False, help_text="At most this many rows (default: all)."
    )


class TableOut(serializers.Serializer[Any]):
    pending = serializers.IntegerField()
    selected = serializers.IntegerField()
    embedded = serializers.IntegerField()


class MaintenanceOut(serializers.Serializer[Any]):
    operation = serializers.CharField()
    target = serializers.CharField()
    dry_run = serializers.BooleanField()
    provider = serializers.CharField()
    model = serializers.CharField()
    dim = serializers.IntegerField()
    tables = serializers.DictField(child=TableOut())
    rows = serializers.IntegerField(help_text="Rows embedded by this call.")
    remaining = serializers.IntegerField(help_text="Rows still to embed with the current model.")


def maintenance(call: Call) -> dict[str, Any]:
    """A health check counts the rows not embedded with the current model (a dry run of
    reembed); a reembed writes them, reporting progress, and is the operator's (staff) job."""
    operation = call.data["operation"]
    check = operation == "health_check_embeddings"
    if not check and not call.user.is_staff:
        raise PermissionDenied("Only staff users may re-embed.")
    summary = rows_reembed(
        target=OPERATIONS[operation],
        limit=call.data.get("limit"),
        dry_run=check or call.data["dry_run"],
        progress=call.progress,
    )
    return {
        "operation": operation,
        "target": summary.target,
        "dry_run": summary.dry_run,
        "provider": summary.provider,
        "model": summary.model,
        "dim": summary.dim,
        "tables": {
            label: {"pending": t.pending, "selected": t.selected, "embedded": t.embedded}
            for label, t in summary.tables.items()
        },
        "rows": summary.rows,
        "remaining": summary.remaining,
    }


class HelpInput(Input):
    tool = serializers.CharField(required=False, help_text="One tool's name; all when omitted.")


class HelpOut(serializers.Serializer[Any]):
    tools = serializers.ListField(child=serializers.DictField())


def detailed_help(call: Call) -> dict[str, Any]:
    name = call.data.get("tool")
    chosen = [tool_find(name)] if name else sorted(TOOLS.values(), key=lambda t: t.name)
    return {
        "tools": [
            {
                "name": tool.name,
                "description": tool.description,
                "memory_server_drop_in": tool.drop_in,
                "input_schema": tool.input_schema(),
            }
            for tool in chosen
        ]
    }


register(
    Tool(
        name="maintenance_ops",
        description="health_check_embeddings: rows of each table not yet embedded with the "
        "current model. reembed (thoughts) / reembed_kg (entities, observations): embed them, "
        "at most limit rows, with progress notifications; dry_run only counts. Staff only, "
        "except the health check.",
        input=MaintenanceInput,
        output=MaintenanceOut,
        run=maintenance,
        idempotent=True,
    )
)
register(
    Tool(
        name="detailed_help",
        description="The description and input schema of one tool (tool) or of all.",
        input=HelpInput,
        output=HelpOut,
        run=detailed_help,
        read_only=True,
    )
)
