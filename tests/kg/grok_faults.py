"""Answers the loopback OpenAI-wire server (tests/support/openai_server.py) cannot script with
``chat_fn``, which only fills in a well-formed completion: a 200 whose body is an HTML page or
JSON of the wrong shape. The server, its socket and its request log stay the real ones."""

from __future__ import annotations

from typing import Any

from tests.support.openai_server import OpenAIStub

HTML = ("text/html", b"<html>not json</html>")


def answer_raw(stub: OpenAIStub, content_type: str, raw: bytes) -> OpenAIStub:
    """From now on every request is answered ``200`` with ``raw`` as ``content_type``."""
    base: Any = stub.httpd.RequestHandlerClass

    class Raw(base):  # type: ignore[misc,valid-type]
        def _send(self, status: int, payload: dict[str, Any]) -> None:
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

    stub.httpd.RequestHandlerClass = Raw
    return stub


def answer_html(stub: OpenAIStub) -> OpenAIStub:
    """A proxy's error page, a captive portal, or a GROK_BASE_URL that names a website."""
    return answer_raw(stub, *HTML)
