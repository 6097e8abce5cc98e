"""A loopback HTTP server that speaks the auxiliary models' wire formats: Anthropic's
``/v1/messages`` and OpenAI's ``/v1/chat/completions``. The real SDKs talk to it over real HTTP.

Each request takes the next scripted ``Reply`` (the last one repeats): a summary, an HTTP
status, a delay, a body of any shape (broken JSON, an HTML page, JSON of the wrong shape), a
body trickled byte by byte. Every request is recorded (path, headers, JSON body) for
assertions.

The suite's fixtures (``llm_server``, ``fake_llm``) are in ``tests/conftest.py``; the benchmarks
call ``serve()`` themselves.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from io import BufferedIOBase
from typing import Any

from compaction.store import ChannelConfig, Store

DEFAULT_SUMMARY = (
    "## Goal\nKeep the agent working on the task.\n\n## Progress\n### Done\n"
    "- Inspected the repository and ran the tests.\n\n## Next steps\n- Continue.\n" + "detail " * 30
)


#: the id of a scripted tool call in the first request (the n-th request's: ``call_recall_n``,
#: each unique as a real model's are)
TOOL_CALL_ID = "call_recall_1"


@dataclass
class Reply:
    text: str = DEFAULT_SUMMARY
    status: int = 200
    delay_s: float = 0.0
    error: str = "upstream failure"
    #: sent as it is, with ``status``, instead of the provider's reply
    body: str | None = None
    content_type: str = "application/json"
    #: seconds between the body's bytes (0: all at once)
    trickle_s: float = 0.0
    #: the same for the status line and the headers
    head_trickle_s: float = 0.0
    #: headers sent besides the content type and length (``retry-after-ms``: a server's wait)
    headers: dict[str, str] = field(default_factory=dict)
    #: a tool call the model makes instead of a final answer: ``(name, arguments)`` (the
    #: gateway's recall, docs/architecture.md, "Recall"), beside ``text``
    tool_call: tuple[str, dict[str, Any]] | None = None


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    #: the body's size in bytes, as sent
    size: int = 0
    #: when it arrived (``time.monotonic()``): the gaps between retries
    at: float = field(default_factory=time.monotonic)


@dataclass
class FakeLLM:
    port: int = 0
    replies: list[Reply] = field(default_factory=lambda: [Reply()])
    requests: list[Recorded] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url_for(self, provider: str) -> str:
        """OpenAI-style SDKs append ``/chat/completions`` to a base ending in ``/v1``;
        Anthropic's appends ``/v1/messages`` itself."""
        return self.base_url if provider == "anthropic" else f"{self.base_url}/v1"

    def add_channel(
        self,
        store: Store,
        name: str,
        *,
        api_key: str,
        provider: str = "openai-compatible",
        model: str = "gpt-4o-mini",
    ) -> ChannelConfig:
        """The store's default auxiliary channel, answered by this server."""
        return store.add_channel(
            name,
            provider=provider,
            model=model,
            base_url=self.url_for(provider),
            api_key=api_key,
            auxiliary=True,
            default=True,
        )

    def script(self, *replies: Reply) -> None:
        with self._lock:
            self.replies = list(replies)
            self.requests.clear()

    def next_reply(self, recorded: Recorded) -> Reply:
        with self._lock:
            self.requests.append(recorded)
            return self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]

    def bodies_text(self) -> str:
        return "\n".join(json.dumps(r.body, ensure_ascii=False) for r in self.requests)


def _handler(fake: FakeLLM) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:  # keep test output clean
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", 0))
            body = json.loads(self.rfile.read(length) or b"{}")
            reply = fake.next_reply(Recorded(self.path, dict(self.headers), body, length))
            if reply.delay_s:
                time.sleep(reply.delay_s)
            if reply.body is not None:
                self._send(reply, reply.status, reply.body)
            elif reply.status != 200:
                self._send(reply, reply.status, _error(self.path, reply))
            elif self.path.endswith("/messages"):
                self._send(reply, 200, _anthropic(body, reply, length // 4, len(fake.requests)))
            elif self.path.endswith("/chat/completions"):
                self._send(reply, 200, _openai(body, reply, length // 4, len(fake.requests)))
            else:
                self._send(reply, 404, {"error": {"message": f"no route {self.path}"}})

        def _send(self, reply: Reply, status: int, payload: dict[str, Any] | str) -> None:
            data = (payload if isinstance(payload, str) else json.dumps(payload)).encode()
            headers = {"content-type": reply.content_type, "content-length": str(len(data))}
            if status == 429:
                headers["retry-after"] = "0"
            headers.update(reply.headers)
            phrase = self.responses.get(status, ("",))[0]
            head = f"HTTP/1.1 {status} {phrase}\r\n"
            head += "".join(f"{name}: {value}\r\n" for name, value in headers.items()) + "\r\n"
            with suppress(BrokenPipeError, ConnectionResetError):  # the client gave up first
                if not reply.head_trickle_s and not reply.trickle_s:
                    # one send: two small ones wait out the client's delayed ACK (~40 ms)
                    self.wfile.write(head.encode() + data)
                    return
                _write(self.wfile, head.encode(), reply.head_trickle_s)
                _write(self.wfile, data, reply.trickle_s)

    return Handler


def _write(out: BufferedIOBase, data: bytes, trickle_s: float) -> None:
    if not trickle_s:
        out.write(data)
        return
    for byte in data:
        out.write(bytes([byte]))
        out.flush()
        time.sleep(trickle_s)


# Usage is estimated from the request's size in bytes: encoding the body again to measure it
# cost the benchmarks' machine more than a worker's whole request.
def _anthropic(body: dict[str, Any], reply: Reply, input_tokens: int, n: int) -> dict[str, Any]:
    text = reply.text
    content: list[dict[str, Any]] = [{"type": "text", "text": text}]
    if reply.tool_call is not None:
        name, arguments = reply.tool_call
        content.append(
            {"type": "tool_use", "id": f"call_recall_{n}", "name": name, "input": arguments}
        )
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": body.get("model"),
        "content": content,
        "stop_reason": "end_turn" if reply.tool_call is None else "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": len(text) // 4},
    }


def _openai(body: dict[str, Any], reply: Reply, prompt_tokens: int, n: int) -> dict[str, Any]:
    text = reply.text
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if reply.tool_call is not None:
        name, arguments = reply.tool_call
        function = {"name": name, "arguments": json.dumps(arguments)}
        message["tool_calls"] = [
            {"id": f"call_recall_{n}", "type": "function", "function": function}
        ]
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model"),
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop" if reply.tool_call is None else "tool_calls",
                "message": message,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": len(text) // 4,
            "total_tokens": prompt_tokens + len(text) // 4,
        },
    }


def _error(path: str, reply: Reply) -> dict[str, Any]:
    if path.endswith("/messages"):
        kind = "overloaded_error" if reply.status == 529 else "api_error"
        return {"type": "error", "error": {"type": kind, "message": reply.error}}
    return {"error": {"message": reply.error, "type": "server_error", "code": None}}


@contextmanager
def serve() -> Iterator[FakeLLM]:
    fake = FakeLLM()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(fake))
    server.daemon_threads = True
    fake.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
