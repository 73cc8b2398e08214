"""One JSON-RPC request of a handshake-era client (protocol 2025-11-25 and before) over /mcp,
served through the SDK's single-exchange driver instead of its stateless transport.

In stateless mode the SDK's transport serves such a POST by building, for that one message, a
transport, memory streams, a JSON-RPC dispatcher and a task group, and passing the message and
its answer through them: about 0.4 ms of CPU a call, more than the tool's own protocol work.
The state all that holds lives only as long as the request. So a plain request (a JSON object
with an id, not ``initialize``, the right Accept and Content-Type) goes straight to the SDK's
``serve_one`` with the same born-ready connection the stateless transport gives it, and its
answer comes back as the transport would write it (200, the JSON-RPC response or error).
Anything else (initialize, notifications, batches, GET, DELETE, a malformed body or header)
takes the SDK's transport, which answers it as it always does."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
import pydantic_core
from mcp.server.connection import Connection
from mcp.server.runner import modern_error_data, serve_one
from mcp.server.streamable_http import check_accept_headers
from mcp.shared.dispatcher import CallOptions
from mcp.shared.exceptions import NoBackChannelError
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp.shared.message import MessageMetadata, ServerMessageMetadata
from mcp.shared.transport_context import TransportContext
from mcp_types import (
    DEFAULT_NEGOTIATED_VERSION,
    JSONRPCError,
    JSONRPCRequest,
    JSONRPCResponse,
    RequestId,
)
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from pydantic import ValidationError
from starlette.requests import Request

_TRANSPORT = TransportContext(kind="streamable-http", can_send_request=False)
_VERSION_HEADER = MCP_PROTOCOL_VERSION_HEADER.lower()


@dataclass(frozen=True)
class Single:
    """A request this path serves: the message, its protocol version and the HTTP request."""

    message: JSONRPCRequest
    version: str
    request: Request


def single_request(scope: dict[str, Any], body: bytes) -> Single | None:
    """The request in ``body`` if this path serves it, else None (the SDK's transport will)."""
    request = Request(scope)
    # No header: a 2025-03-26 client, which sends none (the transport assumes that version too).
    version = request.headers.get(_VERSION_HEADER, DEFAULT_NEGOTIATED_VERSION)
    if request.method != "POST" or version not in HANDSHAKE_PROTOCOL_VERSIONS:
        return None
    if not check_accept_headers(request)[0] or not _json_content(request):
        return None
    try:
        raw = pydantic_core.from_json(body)
    except ValueError:
        return None
    if not isinstance(raw, dict) or "id" not in raw or raw.get("method") == "initialize":
        return None
    try:
        message = JSONRPCRequest.model_validate(raw, by_name=False)
    except ValidationError:
        return None
    return Single(message=message, version=str(version), request=request)


def _json_content(request: Request) -> bool:
    # As the SDK's transport reads Content-Type: one of its comma-separated types is JSON.
    media = request.headers.get("content-type", "").split(";")[0]
    return any(part.strip() == "application/json" for part in media.split(","))


async def answer(server: Any, single: Single, lifespan_state: Any) -> bytes:
    """The JSON-RPC answer to ``single``, as the SDK's stateless transport writes it."""
    message = single.message
    context = _Context(
        request_id=message.id,
        message_metadata=ServerMessageMetadata(request_context=single.request),
    )
    connection = Connection.from_envelope(single.version, None, None)
    reply: JSONRPCResponse | JSONRPCError
    try:
        result = await serve_one(
            server,
            context,
            message.method,
            message.params,
            connection=connection,
            lifespan_state=lifespan_state,
        )
    except Exception as exc:  # the SDK's own mapping: its errors as they are, others hidden
        reply = JSONRPCError(jsonrpc="2.0", id=message.id, error=modern_error_data(exc))
    else:
        reply = JSONRPCResponse(jsonrpc="2.0", id=message.id, result=result)
    return reply.model_dump_json(by_alias=True, exclude_unset=True).encode()


@dataclass
class _Context:
    """The dispatch context of one request answered in one JSON response: no way back to
    the client (no server-to-client requests; notifications, progress included, have no
    stream to go on, as in the stateless transport's JSON mode)."""

    request_id: RequestId
    message_metadata: MessageMetadata
    transport: TransportContext = _TRANSPORT
    cancel_requested: anyio.Event = field(default_factory=anyio.Event)
    can_send_request: bool = False

    async def send_raw_request(
        self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None = None
    ) -> dict[str, Any]:
        raise NoBackChannelError(method)

    async def notify(
        self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None = None
    ) -> None:
        return None

    async def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        return None
