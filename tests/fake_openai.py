"""A small OpenAI-compatible HTTP server on 127.0.0.1 for tests: the real openai client talks to it.

with FakeOpenAI() as server:
    server.script([Fail(429, retry_after=0), Reply("hi")])  # consumed one per request
    server.responder = lambda request: "ok"                # when the script is empty
    server.embedder = lambda model, text: [1.0, 0.0]       # /v1/embeddings: a vector per input
    ... server.base_url ...  server.requests ...
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    text: str | None  # None: `content` is null
    prompt_tokens: int | None = None  # None: characters of the messages // 4
    completion_tokens: int | None = None  # None: len(text) // 4
    usage: bool = True  # False: the reply has no `usage` at all
    delay_s: float = 0.0  # wait before answering (for client timeouts)


@dataclass
class Fail:
    status: int
    retry_after: float | None = None  # sent as the Retry-After header
    message: str | None = None


@dataclass
class Drop:
    """Close the connection without any response."""


@dataclass
class Raw:
    """Answer with this status and body as they are (an HTML page from a proxy, JSON without choices)."""

    body: str
    status: int = 200
    content_type: str = "text/html"


@dataclass
class Trickle:
    """Send the headers of a valid reply, then its body one byte every `interval_s` seconds."""

    text: str = "slow"
    interval_s: float = 0.3


Behaviour = Reply | Fail | Drop | Raw | Trickle

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "invalid_api_key",
    404: "model_not_found",
    429: "rate_limit_exceeded",
}


def _cut_at_stop(text: str, stop: Any) -> str:
    sequences = [stop] if isinstance(stop, str) else list(stop or [])
    cuts = [text.find(s) for s in sequences if s and s in text]
    return text[: min(cuts)] if cuts else text


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as real servers
    disable_nagle_algorithm = True  # headers and body go out in two writes; no 40 ms delayed-ACK stall
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send_json(self, status: int, body: dict, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        error = {"message": message, "type": _ERROR_TYPES.get(status, "server_error"), "code": None}
        self._send_json(status, {"error": error}, headers)

    def do_GET(self) -> None:
        if self.path.rstrip("/") != "/v1/models":
            self._error(404, f"no route {self.path}")
            return
        data = [
            {"id": name, "object": "model", "created": 0, "owned_by": "fake"}
            for name in self.server.fake.models
        ]
        self._send_json(200, {"object": "list", "data": data})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if self.path.rstrip("/") == "/v1/embeddings":
            self._embeddings(raw)
            return
        route = self.path.split("?")[0].rstrip("/")
        # OpenAI's route, or an Azure deployment's (/openai/deployments/NAME/chat/completions?api-version=V)
        azure = (
            re.fullmatch(r"/openai/deployments/[^/]+/chat/completions", route) and "api-version=" in self.path
        )
        if route != "/v1/chat/completions" and not azure:
            self._error(404, f"no route {self.path}")
            return
        self.server.fake.paths.append(self.path)
        try:
            request = json.loads(raw)
        except json.JSONDecodeError:
            self._error(400, "the body is not JSON")
            return
        fake = self.server.fake
        behaviour = fake._record(request)
        if isinstance(behaviour, Drop):
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        if isinstance(behaviour, Raw):
            data = behaviour.body.encode()
            self.send_response(behaviour.status)
            self.send_header("Content-Type", behaviour.content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        if isinstance(behaviour, Trickle):
            self._trickle(json.dumps(fake._completion(request, Reply(behaviour.text))).encode(), behaviour)
            return
        if isinstance(behaviour, Fail):
            headers = (
                {"Retry-After": f"{behaviour.retry_after:g}"} if behaviour.retry_after is not None else None
            )
            self._error(behaviour.status, behaviour.message or f"fake failure {behaviour.status}", headers)
            return
        if behaviour is None:
            try:
                behaviour = Reply(fake.responder(request))
            except Exception as exc:  # a broken responder shows up in the test as a 500 with its message
                self._error(500, f"responder failed: {type(exc).__name__}: {exc}")
                return
        if behaviour.delay_s:
            time.sleep(behaviour.delay_s)
        self._send_json(200, fake._completion(request, behaviour))

    def _embeddings(self, raw: bytes) -> None:
        request = json.loads(raw)
        fake = self.server.fake
        with fake._lock:
            fake.embedding_requests.append(request)
        inputs = request["input"] if isinstance(request["input"], list) else [request["input"]]
        data = [
            {"object": "embedding", "index": i, "embedding": fake.embedder(request["model"], text)}
            for i, text in enumerate(inputs)
        ]
        usage = {"prompt_tokens": 0, "total_tokens": 0}
        self._send_json(200, {"object": "list", "data": data, "model": request["model"], "usage": usage})

    def _trickle(self, data: bytes, behaviour: Trickle) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.flush()
        for index in range(len(data)):
            if self.server.fake.stopping.wait(behaviour.interval_s):
                return
            try:
                self.wfile.write(data[index : index + 1])
                self.wfile.flush()
            except OSError:  # the client gave up and closed the connection
                return


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # socketserver's default backlog is 5: a sixth simultaneous connect waits for a SYN retry (1 s), which
    # a run with -j 16 would measure as model latency
    request_queue_size = 128
    fake: FakeOpenAI

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # dropped and timed-out connections are expected here


class FakeOpenAI:
    def __init__(self, port: int = 0) -> None:
        self.port = port  # 0: any free port
        self.requests: list[dict] = []
        self.paths: list[str] = []  # of the chat requests
        self.responder: Callable[[dict], str] = lambda request: "ok"
        self.embedder: Callable[[str, str], list[float]] = lambda model, text: [1.0, 0.0]
        self.embedding_requests: list[dict] = []
        self.models = ["fake-model"]
        self._queue: deque[Behaviour] = deque()
        self._lock = threading.Lock()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._counter = 0
        self.stopping = threading.Event()  # ends trickling replies when the server stops

    @property
    def base_url(self) -> str:
        assert self._server is not None, "the server is not started: use `with FakeOpenAI() as server`"
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def script(self, behaviours: Iterable[Behaviour]) -> None:
        """Queue behaviours, consumed one per chat request before the responder is used."""
        with self._lock:
            self._queue.extend(behaviours)

    def _record(self, request: dict) -> Behaviour | None:
        with self._lock:
            self.requests.append(request)
            return self._queue.popleft() if self._queue else None

    def _completion(self, request: dict, reply: Reply) -> dict:
        text = None if reply.text is None else _cut_at_stop(reply.text, request.get("stop"))
        with self._lock:
            self._counter += 1
            number = self._counter
        body: dict[str, Any] = {
            "id": f"chatcmpl-fake-{number}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.get("model", ""),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                    "logprobs": None,
                }
            ],
        }
        if reply.usage:
            characters = sum(len(str(m.get("content") or "")) for m in request.get("messages", []))
            prompt = reply.prompt_tokens if reply.prompt_tokens is not None else characters // 4
            completion = (
                reply.completion_tokens if reply.completion_tokens is not None else len(text or "") // 4
            )
            body["usage"] = {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            }
        return body

    def __enter__(self) -> FakeOpenAI:
        self._server = _Server(("127.0.0.1", self.port), _Handler)
        self._server.fake = self
        # a short poll interval: shutdown() waits up to one interval
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, name="fake-openai", daemon=True
        )
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None and self._thread is not None
        self.stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


def image_parts(request: dict) -> list[bytes]:
    """The images of a request's last message, decoded from their data URLs (what a vision model sees)."""
    import base64

    content = request["messages"][-1].get("content")
    images = []
    for part in content if isinstance(content, list) else []:
        if part.get("type") == "image_url":
            url = part["image_url"]["url"]
            header, _, data = url.partition(",")
            assert header == "data:image/png;base64", f"an image part that is not a PNG data URL: {header}"
            images.append(base64.b64decode(data))
    return images


def text_parts(request: dict) -> str:
    """The text of a request's last message, its parts joined."""
    content = request["messages"][-1].get("content")
    if isinstance(content, str):
        return content
    return "\n".join(part["text"] for part in content if part.get("type") == "text")
