"""A real HTTP server on 127.0.0.1 that speaks the OpenAI wire format (embeddings and chat
completions). Tests script its answers; the SDK under test talks to it over a real socket.

    server.embed_fn = lambda texts: [[...], ...]      # vectors for /v1/embeddings
    server.chat_fn = lambda messages: "answer text"    # content for /v1/chat/completions
    server.fail_next(429, times=1)                     # the next request(s) answer with an error
    server.answer_format = "float"                     # ignore the request's encoding_format
    server.max_input_tokens = 50                       # refuse longer inputs as OpenAI does
    server.max_request_tokens = 300                    # and requests over this total

Tokens here are whitespace-separated words (OpenAI counts BPE tokens: the wire format and the
400 answers are what matter).

Each entry of ``server.requests`` has the path, the JSON body, the Authorization header and
``at``, the ``time.monotonic()`` when the request arrived (for retry and rate-limit timing).
"""

from __future__ import annotations

import base64
import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np


def _encoded(vector: list[float], fmt: str) -> list[float] | str:
    """As the API answers: a list of floats, or with ``encoding_format: base64`` (what the SDK
    asks for unless told otherwise) the little-endian float32 bytes in base64."""
    if fmt == "base64":
        return base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode()
    return vector


class OpenAIStub:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.failures: list[int] = []
        self.embed_fn: Callable[[list[str]], list[list[float]]] = lambda texts: [
            [1.0, 0.0, 0.0] for _ in texts
        ]
        self.chat_fn: Callable[[list[dict[str, Any]]], str] = lambda messages: "ok"
        # None: answer in the encoding the request asks for, as the API does; "float": always
        # lists of floats, as some OpenAI-compatible servers do whatever was asked.
        self.answer_format: str | None = None
        self.max_input_tokens: int | None = None
        self.max_request_tokens: int | None = None
        self._lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                with stub._lock:
                    stub.requests.append(
                        {
                            "path": self.path,
                            "body": body,
                            "auth": self.headers.get("Authorization"),
                            "at": time.monotonic(),
                        }
                    )
                    status = stub.failures.pop(0) if stub.failures else 200
                if status != 200:
                    self._send(
                        status,
                        {
                            "error": {
                                "message": f"scripted {status}",
                                "type": "server_error",
                                "code": None,
                            }
                        },
                    )
                    return
                if self.path.endswith("/embeddings"):
                    inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
                    refusal = stub.too_many_tokens(inputs)
                    if refusal:
                        error = {"message": refusal, "type": "invalid_request_error", "code": None}
                        self._send(400, {"error": error})
                        return
                    vectors = stub.embed_fn(inputs)
                    fmt = stub.answer_format or body.get("encoding_format", "float")
                    data = [
                        {"object": "embedding", "index": i, "embedding": _encoded(v, fmt)}
                        for i, v in enumerate(vectors)
                    ]
                    self._send(
                        200,
                        {
                            "object": "list",
                            "data": data,
                            "model": body.get("model"),
                            "usage": {"prompt_tokens": 1, "total_tokens": 1},
                        },
                    )
                elif self.path.endswith("/chat/completions"):
                    text = stub.chat_fn(body.get("messages", []))
                    self._send(
                        200,
                        {
                            "id": "chatcmpl-test",
                            "object": "chat.completion",
                            "created": 0,
                            "model": body.get("model"),
                            "choices": [
                                {
                                    "index": 0,
                                    "finish_reason": "stop",
                                    "message": {"role": "assistant", "content": text},
                                }
                            ],
                            "usage": {
                                "prompt_tokens": 1,
                                "completion_tokens": 1,
                                "total_tokens": 2,
                            },
                        },
                    )
                else:
                    self._send(404, {"error": {"message": "no such route"}})

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                raw = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def too_many_tokens(self, inputs: list[str]) -> str | None:
        """OpenAI's 400 message for ``inputs`` over a limit, or None."""
        counts = [len(text.split()) for text in inputs]
        longest = max(counts, default=0)
        if self.max_input_tokens is not None and longest > self.max_input_tokens:
            return (
                f"This model's maximum context length is {self.max_input_tokens} tokens, however "
                f"you requested {longest} tokens ({longest} in your prompt; 0 for the "
                "completion). Please reduce your prompt; or completion length."
            )
        if self.max_request_tokens is not None and sum(counts) > self.max_request_tokens:
            return (
                f"Requested {sum(counts)} tokens, max {self.max_request_tokens} tokens per request"
            )
        return None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def fail_next(self, status: int, times: int = 1) -> None:
        with self._lock:
            self.failures.extend([status] * times)

    def start(self) -> OpenAIStub:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def use_openai_embeddings(settings: Any, stub: OpenAIStub, *, dim: int = 4) -> OpenAIStub:
    """Point the ``openai`` provider at ``stub`` (model text-embedding-3-small cut to ``dim``,
    no retries), answering with the hash embedder's vectors."""
    from legacymind.providers.embeddings import HashEmbedder

    settings.EMBEDDING_PROVIDER = "openai"
    settings.OPENAI_API_KEY = "sk-test"
    settings.OPENAI_BASE_URL = stub.base_url
    settings.EMBEDDING_MODEL = "text-embedding-3-small"
    settings.EMBEDDING_DIM = dim
    settings.EMBEDDING_MAX_RETRIES = 0
    stub.embed_fn = lambda texts: HashEmbedder(dim=dim).embed(texts).tolist()
    return stub
