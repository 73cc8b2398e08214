"""``/mcp``: the same tools over Streamable HTTP, on the web app's own port.

A DRF view does what every API request gets (token authentication, per-user throttles, the
error envelope) and checks the ``Origin`` header; the SDK's session manager, stateless and
answering in JSON, speaks the protocol on an event loop of the serving thread's own, and the
tools run in the request's thread (with its database connection) as the authenticated user."""

from __future__ import annotations

import asyncio
import atexit
import threading
from collections.abc import Callable, Coroutine, MutableMapping
from typing import Any, TypeVar

from django.conf import settings
from django.http import HttpResponse
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from rest_framework.authentication import TokenAuthentication, get_authorization_header
from rest_framework.exceptions import AuthenticationFailed, PermissionDenied
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.views import APIView

from legacymind.users import signed_in
from mcpserver.conf import allowed_origins
from mcpserver.server import SCOPE_KEY, Caller, build
from mcpserver.single import answer, single_request

T = TypeVar("T")


class BearerOrTokenAuthentication(TokenAuthentication):
    """The REST API's token, as ``Authorization: Bearer <key>`` (what MCP clients send) or
    ``Token <key>`` (what the REST API takes)."""

    def authenticate(self, request: Request) -> tuple[Any, Any] | None:
        parts = get_authorization_header(request).split()
        if not parts or parts[0].lower() not in (b"bearer", b"token"):
            return None
        if len(parts) != 2:
            raise AuthenticationFailed("Invalid Authorization header: give one token.")
        try:
            key = parts[1].decode()
        except UnicodeError:
            raise AuthenticationFailed("Invalid token.") from None
        return self.authenticate_credentials(key)

    def authenticate_header(self, request: Request) -> str:
        return 'Bearer realm="legacymind"'


def origin_allowed(request: Request) -> bool:
    """A browser's request from another site is refused (DNS rebinding): the page's origin must
    be this server's, one of ``DJANGO_CSRF_TRUSTED_ORIGINS`` or of ``MCP_ALLOWED_ORIGINS``.
    Clients that are not browsers send no Origin."""
    origin = request.headers.get("Origin")
    if origin is None:
        return True
    own = f"{request.scheme}://{request.get_host()}"
    trusted = {o.lower() for o in getattr(settings, "CSRF_TRUSTED_ORIGINS", [])}
    return origin.lower() in {own.lower(), *trusted, *allowed_origins()}


_server: Any = None


def _mcp_server() -> Any:
    global _server
    if _server is None:
        _server = build(None)
    return _server


class _Resident:
    """A thread's event loop and the SDK's session manager running on it, kept between the
    requests that thread serves: building both for each request cost about 0.3 ms of CPU (a
    loop's selector and self-pipe, the manager's locks, lifespan and task group). The manager
    runs in a task of its own (its task group must be entered and left by one task); between
    requests nothing runs and the loop is idle."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.manager = StreamableHTTPSessionManager(
            app=_mcp_server(),
            json_response=True,
            stateless=True,
            # The view checked the Origin, and Django the Host (ALLOWED_HOSTS).
            security_settings=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )
        self.stop = asyncio.Event()
        started = self.loop.create_future()

        async def host() -> None:
            async with self.manager.run():
                started.set_result(None)
                await self.stop.wait()

        self.host = self.loop.create_task(host())
        self.loop.run_until_complete(started)

    @property
    def sound(self) -> bool:
        return not self.host.done() and not self.loop.is_closed()

    def close(self) -> None:
        """Leave the manager's run (it cancels what is left) and close the loop. Called with
        the loop idle, from any thread: its own is gone."""
        try:
            if not self.host.done():
                self.stop.set()
                self.loop.run_until_complete(self.host)
        finally:
            self.loop.close()


_residents: dict[threading.Thread, _Resident] = {}
_residents_lock = threading.Lock()


def _resident() -> _Resident:
    """This thread's resident, made on first use. Servers that start a thread per request
    (runserver, the tests' live server) leave one behind each time: those of threads that
    have ended are closed here, by the next request."""
    me = threading.current_thread()
    with _residents_lock:
        found = _residents.get(me)
        ended = [t for t in _residents if not t.is_alive()]
        gone = [_residents.pop(t) for t in ended]
    for resident in gone:
        resident.close()
    if found is not None and found.sound:
        return found
    if found is not None:
        found.close()
    made = _Resident()
    with _residents_lock:
        _residents[me] = made
    return made


@atexit.register
def _residents_close() -> None:
    with _residents_lock:
        gone = list(_residents.values())
        _residents.clear()
    for resident in gone:
        resident.close()


def serve(scope: dict[str, Any], body: bytes, *, direct: bool = True) -> HttpResponse:
    """Serve one request on this thread's event loop: a plain request of a handshake-era
    client through ``mcpserver.single`` (unless ``direct`` is false), anything else through
    the SDK's session manager."""
    resident = _resident()
    loop = resident.loop
    pending: list[tuple[Callable[[], Any], asyncio.Future[Any]]] = []

    async def run(fn: Callable[[], Any]) -> Any:
        future = loop.create_future()
        pending.append((fn, future))
        loop.stop()
        return await future

    scope[SCOPE_KEY] = Caller(user=scope.pop("user"), run=run)
    single = single_request(scope, body) if direct else None
    if single is not None:
        state = resident.manager._lifespan_state  # entered once by the manager's run()
        reply = _drive(loop, answer(_mcp_server(), single, state), pending)
        return HttpResponse(reply, content_type="application/json")
    exchange = _Exchange(body)
    _drive(loop, resident.manager.handle_request(scope, exchange.receive, exchange.send), pending)
    return exchange.response()


def _drive(
    loop: asyncio.AbstractEventLoop,
    work: Coroutine[Any, Any, T],
    pending: list[tuple[Callable[[], Any], asyncio.Future[Any]]],
) -> T:
    """Run ``work`` on ``loop``. When a tool is called the loop stops, the tool runs here with
    no loop running (Django's ORM is synchronous) and the loop resumes with its result: no
    second thread, so no handing work and the GIL back and forth."""
    task = loop.create_task(work)
    task.add_done_callback(lambda _: loop.stop())
    while not task.done():
        loop.run_forever()
        while pending:
            _settle(*pending.pop(0))
    return task.result()


def _settle(fn: Callable[[], Any], future: asyncio.Future[Any]) -> None:
    try:
        result = fn()
    except Exception as exc:
        future.set_exception(exc)
    else:
        future.set_result(result)


class _Exchange:
    """The ASGI side of one request: its body in, the response collected."""

    def __init__(self, body: bytes) -> None:
        self.body, self.sent = body, False
        self.status, self.headers, self.chunks = 500, list[tuple[bytes, bytes]](), list[bytes]()
        self.finished: asyncio.Event | None = None

    async def receive(self) -> dict[str, Any]:
        if not self.sent:
            self.sent = True
            return {"type": "http.request", "body": self.body, "more_body": False}
        self.finished = self.finished or asyncio.Event()
        await self.finished.wait()  # the client stays until the answer is complete
        return {"type": "http.disconnect"}

    async def send(self, message: MutableMapping[str, Any]) -> None:
        if message["type"] == "http.response.start":
            self.status, self.headers = message["status"], list(message.get("headers", []))
        elif message["type"] == "http.response.body":
            self.chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                self.finished = self.finished or asyncio.Event()
                self.finished.set()

    def response(self) -> HttpResponse:
        out = HttpResponse(b"".join(self.chunks), status=self.status)
        for name, value in self.headers:
            if name.lower() != b"content-length":
                out[name.decode("latin-1")] = value.decode("latin-1")
        return out


class McpView(APIView):
    """The MCP endpoint (Streamable HTTP). Authorization: Bearer <your API token>."""

    authentication_classes = [BearerOrTokenAuthentication]
    permission_classes = [IsAuthenticated]
    parser_classes: list[Any] = []  # the body goes to the SDK as it came
    schema = None  # not a REST endpoint: not in the OpenAPI document

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        if not origin_allowed(request):
            raise PermissionDenied("Origin not allowed.")
        super().initial(request, *args, **kwargs)

    def post(self, request: Request) -> HttpResponse:
        return self._serve(request)

    def get(self, request: Request) -> HttpResponse:
        return self._serve(request)

    def delete(self, request: Request) -> HttpResponse:
        return self._serve(request)

    def _serve(self, request: Request) -> HttpResponse:
        raw = request._request
        headers = [
            (k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in raw.headers.items()
        ]
        scope: dict[str, Any] = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": raw.method,
            "scheme": raw.scheme,
            "path": "/mcp",
            "raw_path": b"/mcp",
            "root_path": "",
            "query_string": raw.META.get("QUERY_STRING", "").encode("latin-1"),
            "headers": headers,
            "server": (raw.get_host().rsplit(":", 1)[0], int(raw.get_port() or 80)),
            "client": (raw.META.get("REMOTE_ADDR", ""), 0),
            "user": signed_in(request),
        }
        return serve(scope, raw.body)
