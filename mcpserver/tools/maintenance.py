"""``maintenance_ops`` (the reembed command's service) and ``detailed_help``."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from rest_framework import serializers

from legacymind.api.inputs import Input
from legacymind.vectors.reembed import rows_reembed
from legacymind.vectors.reembed_jobs import (
    JOB_STATES,
    ReembedJob,
    reembed_job_cancel,
    reembed_job_start,
    reembed_job_status,
)
from mcpserver.registry import TOOLS, Call, Tool, register, tool_find

# The original's operations and the tables each one covers.
OPERATIONS = {"health_check_embeddings": "all", "reembed": "thoughts", "reembed_kg": "kg"}
# Follow and stop a reembed started with background: the run outlives any one HTTP request.
JOB_STATUS = "job_status"
JOB_CANCEL = "job_cancel"
JOB_OPERATIONS = (JOB_STATUS, JOB_CANCEL)
STAFF_ONLY = "Only staff users may re-embed."


class MaintenanceInput(Input):
    operation = serializers.ChoiceField(choices=[*OPERATIONS, *JOB_OPERATIONS])
    dry_run = serializers.BooleanField(
        default=False, help_text="Count what would be embedded; write nothing."
    )
    limit = serializers.IntegerField(
        min_value=1, required=False, help_text="At most this many rows (default: all)."
    )
    background = serializers.BooleanField(
        default=False,
        help_text="reembed / reembed_kg: queue the run for the Celery worker and answer at once "
        "with job.id (needs REDIS_URL and a running worker); follow it with job_status.",
    )
    job_id = serializers.UUIDField(
        required=False,
        help_text="job_status / job_cancel: the job.id a background reembed returned.",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        operation = attrs["operation"]
        if operation in JOB_OPERATIONS and "job_id" not in attrs:
            raise serializers.ValidationError({"job_id": [f"{operation} needs job_id."]})
        if operation not in JOB_OPERATIONS and "job_id" in attrs:
            raise serializers.ValidationError(
                {"job_id": ["Only job_status and job_cancel take job_id."]}
            )
        if attrs["background"] and operation not in ("reembed", "reembed_kg"):
            raise serializers.ValidationError(
                {"background": ["Only reembed and reembed_kg run in the background."]}
            )
        return attrs


class TableOut(serializers.Serializer[Any]):
    pending = serializers.IntegerField()
    selected = serializers.IntegerField()
    embedded = serializers.IntegerField()


class JobOut(serializers.Serializer[Any]):
    id = serializers.CharField(help_text="What job_status and job_cancel take as job_id.")
    state = serializers.ChoiceField(
        choices=JOB_STATES,
        help_text="cancelling: running, and stopping after the batch it is writing.",
    )
    done = serializers.IntegerField(allow_null=True, help_text="Rows re-embedded so far.")
    total = serializers.IntegerField(
        allow_null=True, help_text="Rows the run will do (null until it has counted them)."
    )
    error = serializers.CharField(allow_null=True, help_text="Why it failed.")


class MaintenanceOut(serializers.Serializer[Any]):
    """A run's summary; for a background job, ``job``, and the summary once it is done (or
    cancelled: what it did before it stopped)."""

    operation = serializers.CharField()
    target = serializers.CharField(allow_null=True)
    dry_run = serializers.BooleanField(allow_null=True)
    provider = serializers.CharField(allow_null=True)
    model = serializers.CharField(allow_null=True)
    dim = serializers.IntegerField(allow_null=True)
    tables = serializers.DictField(child=TableOut(), allow_null=True)
    rows = serializers.IntegerField(allow_null=True, help_text="Rows embedded by this run.")
    remaining = serializers.IntegerField(
        allow_null=True, help_text="Rows still to embed with the current model."
    )
    job = JobOut(allow_null=True, help_text="background and job_status: the job.")


def maintenance(call: Call) -> dict[str, Any]:
    """A health check counts the rows not embedded with the current model (a dry run of
    reembed); a reembed writes them, reporting progress, and is the operator's (staff) job,
    in this call or, with background, in the worker, followed with job_status (staff too: a
    job is a site-wide run, and its id is no one's private business but the operators')."""
    operation = call.data["operation"]
    check = operation == "health_check_embeddings"
    if not check and not call.user.is_staff:
        raise PermissionDenied(STAFF_ONLY)
    if operation == JOB_STATUS:
        return _job_out(operation, reembed_job_status(job_id=str(call.data["job_id"])))
    if operation == JOB_CANCEL:
        return _job_out(operation, reembed_job_cancel(job_id=str(call.data["job_id"])))
    if call.data["background"]:
        job = reembed_job_start(
            target=OPERATIONS[operation], limit=call.data.get("limit"), dry_run=call.data["dry_run"]
        )
        out = _job_out(operation, job)
        return {**out, "target": OPERATIONS[operation], "dry_run": call.data["dry_run"]}
    summary = rows_reembed(
        target=OPERATIONS[operation],
        limit=call.data.get("limit"),
        dry_run=check or call.data["dry_run"],
        progress=call.progress,
    )
    return {**_summary_out(operation, summary.as_dict()), "job": None}


def _summary_out(operation: str, summary: dict[str, Any]) -> dict[str, Any]:
    """``ReembedSummary.as_dict()`` as the tool answers it."""
    return {
        "operation": operation,
        **{key: summary[key] for key in ("target", "dry_run", "provider", "model", "dim")},
        "tables": {
            label: {key: t[key] for key in ("pending", "selected", "embedded")}
            for label, t in summary["tables"].items()
        },
        "rows": summary["rows"],
        "remaining": summary["remaining"],
    }


def _job_out(operation: str, job: ReembedJob) -> dict[str, Any]:
    """The job, with its run's summary once it is done (nulls until then)."""
    if job.summary is not None:
        out = _summary_out(operation, job.summary)
    else:
        out = {"operation": operation, **dict.fromkeys(_SUMMARY_KEYS)}
    out["job"] = {
        "id": job.id,
        "state": job.state,
        "done": job.done,
        "total": job.total,
        "error": job.error,
    }
    return out


_SUMMARY_KEYS = ("target", "dry_run", "provider", "model", "dim", "tables", "rows", "remaining")


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
        "at most limit rows, with progress notifications (stdio); dry_run only counts. "
        "background: true queues the reembed for the Celery worker and returns job.id at once "
        "(the way to run a long one over HTTP, where a call is one request); job_status with "
        "job_id then says queued / running / done / failed, rows done of total, and the "
        "summary once done. job_cancel with job_id stops it: a queued job never runs; a running "
        "one reads cancelling, stops after the batch it is writing (the rows written stay) and "
        "then reads cancelled with rows done of total; a job that has ended is left as it was "
        "(a tool error says so). Staff only, except the health check.",
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
