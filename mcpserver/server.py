"""The MCP server (the SDK's low-level ``Server``): tools from ``mcpserver.registry`` and a
resource template per thought. Handlers are async; the tools are Django code, so each call
runs synchronously through the ``Runner`` of its transport (a worker thread for stdio, the
HTTP request's own thread for /mcp), as the caller of that transport."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar

import anyio
import mcp_types as types
from django.contrib.auth.models import User
from django.db import close_old_connections
from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPError

from legacymind.errors import NotFound
from mcpserver import tools  # noqa: F401  registers the tools
from mcpserver.registry import TOOLS, ToolError, as_json, tool_text
from thoughts import selectors
from thoughts.api.read import ChainOut, ThoughtDetailOut

logger = logging.getLogger("mcpserver")
T = TypeVar("T")
Runner = Callable[[Callable[[], Any]], Awaitable[Any]]

THOUGHT_URI = "legacymind://thoughts/{thought_id}"
_THOUGHT_URI = re.compile(r"^legacymind://thoughts/(?P<thought_id>[^/?#]+)$")
SCOPE_KEY = "legacymind.mcp"  # where the HTTP door leaves the caller in the ASGI scope


@dataclass(frozen=True)
class Caller:
    user: User
    run: Runner


async def in_thread(fn: Callable[[], T]) -> T:
    """Run Django code off the event loop, with the connection checks a request gets."""

    def wrapped() -> T:
        close_old_connections()
        try:
            return fn()
        finally:
            close_old_connections()

    return await anyio.to_thread.run_sync(wrapped)


def _tool(tool: Any) -> types.Tool:
    hints = types.ToolAnnotations(
        read_only_hint=tool.read_only,
        destructive_hint=tool.destructive if not tool.read_only else None,
        idempotent_hint=tool.idempotent or tool.read_only,
        open_world_hint=False,
    )
    return types.Tool(
        name=tool.name,
        description=tool.description,
        input_schema=tool.input_schema(),
        output_schema=tool.output_schema(),
        annotations=hints,
    )


def thought_resource(user: User, thought_id: str) -> dict[str, Any]:
    """A thought (as its REST detail) and its chain (as the chain endpoint answers it)."""
    thought = selectors.thought_get(user=user, thought_id=thought_id)
    context = {
        "links": selectors.thought_links(user=user, thought=thought),
        "injected": selectors.injected_memories(user=user, thought=thought),
    }
    chain = selectors.thought_chain(user=user, thought=thought)
    return as_json(
        {"thought": ThoughtDetailOut(thought, context=context).data, "chain": ChainOut(chain).data}
    )


CallerOf = Callable[[ServerRequestContext[Any]], Caller]


def _caller_of(default: Caller | None) -> CallerOf:
    """Who a request runs as: the one the HTTP door left in the scope, else ``default``."""

    def caller(ctx: ServerRequestContext[Any]) -> Caller:
        scope = getattr(ctx.request, "scope", None) or {}
        found = scope.get(SCOPE_KEY) or default
        if found is None:  # only a misassembled transport gets here
            raise RuntimeError("MCP request without a caller")
        return found

    return caller


async def _list_tools(
    ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[_tool(tool) for tool in TOOLS.values()])


def _call_tool(caller: CallerOf) -> Callable[..., Awaitable[types.CallToolResult]]:
    """The tools/call handler: the tool run as the caller; a refusal is a tool error."""

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        who = caller(ctx)
        report = _progress_reporter(ctx)
        run = partial(tool_text, user=who.user, name=params.name, arguments=params.arguments)
        try:
            text = await who.run(partial(run, progress=report))
        except ToolError as exc:
            message: list[types.ContentBlock] = [types.TextContent(type="text", text=str(exc))]
            return types.CallToolResult(content=message, is_error=True)
        # The text rendering, for clients that read no structuredContent, is the same JSON.
        rendered: list[types.ContentBlock] = [types.TextContent(type="text", text=text)]
        return types.CallToolResult(content=rendered, structured_content=json.loads(text))

    return call_tool


async def _list_templates(
    ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
) -> types.ListResourceTemplatesResult:
    template = types.ResourceTemplate(
        uri_template=THOUGHT_URI,
        name="thought",
        description="One of your thoughts (id: <uuid> or thoughts:<uuid>) and its chain.",
        mime_type="application/json",
    )
    return types.ListResourceTemplatesResult(resource_templates=[template])


async def _list_resources(
    ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
) -> types.ListResourcesResult:
    return types.ListResourcesResult(resources=[])  # thoughts are reached by template


def _read_resource(caller: CallerOf) -> Callable[..., Awaitable[types.ReadResourceResult]]:
    """The resources/read handler: one of the caller's thoughts and its chain."""

    async def read_resource(
        ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        match = _THOUGHT_URI.match(str(params.uri))
        if match is None:
            raise _not_found(params.uri, f"Unknown resource; expected {THOUGHT_URI}")
        who = caller(ctx)
        try:
            body = await who.run(partial(thought_resource, who.user, match["thought_id"]))
        except NotFound as exc:
            raise _not_found(params.uri, str(exc.detail)) from None
        text = json.dumps(body, ensure_ascii=False)
        contents = types.TextResourceContents(
            uri=str(params.uri), mime_type="application/json", text=text
        )
        return types.ReadResourceResult(contents=[contents])

    return read_resource


def _not_found(uri: Any, why: str) -> MCPError:
    """A resource that is not there (or not the caller's): the error the protocol names for
    it, INVALID_PARAMS with the uri, and words the client can show. Any other exception would
    reach the client as an unexplained internal error."""
    return MCPError(types.INVALID_PARAMS, f"Resource not found: {why}", {"uri": str(uri)})


def build(default: Caller | None) -> Server[Any]:
    """The server. ``default`` is the stdio caller; over HTTP each request brings its own."""
    caller = _caller_of(default)
    server: Server[Any] = Server(
        "legacymind",
        version="1.0.0",
        instructions="LegacyMind: your thoughts, a moderated knowledge graph and an inner voice. "
        "detailed_help describes every tool.",
        on_list_tools=_list_tools,
        on_call_tool=_call_tool(caller),
        on_list_resources=_list_resources,
        on_list_resource_templates=_list_templates,
        on_read_resource=_read_resource(caller),
        # What the 2026-07-28 HTTP path checks Mcp-Param-* headers against: without it the SDK
        # runs the whole tools/list handler for every tools/call with arguments.
        get_tool_input_schema=_input_schema,
    )
    # The SDK traces each message with OpenTelemetry by default; no exporter is installed here,
    # so the spans would cost every call (about half a millisecond) and go nowhere.
    server.middleware = []
    return server


def _input_schema(name: str) -> dict[str, Any] | None:
    tool = TOOLS.get(name)
    return tool.input_schema() if tool is not None else None


def _progress_reporter(ctx: ServerRequestContext[Any]) -> Callable[[int, int], None] | None:
    """A progress callback for the tool's thread that notifies the client, when the client
    asked for progress (a progressToken in the request's _meta)."""
    meta: dict[str, Any] = dict(ctx.meta or {})
    token = meta.get("progress_token", meta.get("progressToken"))
    if not isinstance(token, str | int):
        return None

    def report(done: int, total: int) -> None:
        try:
            anyio.from_thread.run(
                partial(ctx.session.send_progress_notification, token, done, total)
            )
        except Exception:  # progress is advisory: a client gone away must not stop the work
            logger.debug("progress notification not sent", exc_info=True)

    return report
