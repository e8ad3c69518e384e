"""Chat completions from any OpenAI-compatible endpoint, with our own retries, a per-model concurrency
limit shared by the whole process, a response cache and token / cost accounting.

The cache key is the whole request and the sample's epoch (`requests_of_epoch`, set by the run for each
sample): a task run N times asks the model N times, even with the cache on, as Inspect's cache is per
epoch; a later run of the same epoch is what the cache answers.

Every attempt has a total deadline (`timeout_s`: connecting, waiting and reading the whole body; the
HTTP library's own timeout is per read, so a server that trickles a byte at a time would never time
out); the attempt runs in a worker thread and is abandoned, its connection closed, when the deadline
passes. Retries are bounded per call (`max_retries`) and per run (`max_run_retries`, shared by every
call of the client), and a reply that is not a chat completion with text (an HTML page from a proxy, no
`choices`, `content` null) is retried like an outage, then reported as one, with the reason.
"""

from __future__ import annotations

import contextlib
import contextvars
import email.utils
import functools
import hashlib
import http
import json
import logging
import os
import random
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import asdict, dataclass, replace
from typing import Any, Literal

from daharness.core.collector import collector_paused
from daharness.core.errors import UserError
from daharness.models.cache import ResponseCache
from daharness.models.settings import ModelSettings

# Module-level so that tests can shorten the waits; full jitter: a wait is uniform in [0, base * 2**n].
BACKOFF_BASE_S = 0.5
BACKOFF_CAP_S = 30.0

log = logging.getLogger("daharness.models")

CacheMode = Literal["on", "off", "refresh"]
SAMPLING_KEYS = ("temperature", "top_p", "max_tokens", "stop", "seed")

_HINTS = {
    400: "the server refused the request; check the sampling parameters and the prompt size",
    401: "check the key in ${env}",
    403: "the key in ${env} has no access to this model",
    404: "check the model name and the base URL",
}

_slots: dict[tuple[str | None, str], threading.BoundedSemaphore] = {}
# the epoch of the sample whose thread makes the request (1 outside a run)
_epoch: contextvars.ContextVar[int] = contextvars.ContextVar("daharness_request_epoch", default=1)


@contextmanager
def requests_of_epoch(epoch: int) -> Iterator[None]:
    """Within it, this thread's requests belong to repeat `epoch` of a task: cached apart from the other
    epochs' (a repeat that replayed the first epoch's replies would make pass@k equal pass@1)."""
    token = _epoch.set(epoch)
    try:
        yield
    finally:
        _epoch.reset(token)


_slots_lock = threading.Lock()


def _semaphore(settings: ModelSettings) -> AbstractContextManager[Any]:
    """One semaphore per (base_url, model) for the whole process; the first client sizes it. Without a
    limit the run's own concurrency (-j) bounds the requests in flight."""
    if settings.max_concurrency is None:
        return contextlib.nullcontext()
    key = (settings.base_url, settings.model)
    with _slots_lock:
        if key not in _slots:
            _slots[key] = threading.BoundedSemaphore(settings.max_concurrency)
        return _slots[key]


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    calls: int = 0
    retries: int = 0  # attempts repeated after an outage, a timeout or a malformed reply

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.cost_usd + other.cost_usd,
            self.calls + other.calls,
            self.retries + other.retries,
        )

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class Completion:
    text: str
    usage: Usage  # of this call (calls=1); a cache hit keeps the token counts and costs nothing
    cached: bool
    latency_s: float  # the whole call: waiting for a slot, retries and backoff included
    finish_reason: str | None
    request_id: str  # the cache key


class ModelError(Exception):
    """The model could not answer this request."""


class ModelFatalError(ModelError):
    """A wrong key, model or URL: every further request would fail the same way, so the run stops."""


class ModelUnavailableError(ModelError):
    """Still 429 / 5xx / timeouts / dropped connections / malformed replies after every retry.
    `unreachable`: the last attempt could not connect at all (nothing listens there, no route, DNS)."""

    def __init__(self, message: str, *, unreachable: bool = False) -> None:
        super().__init__(message)
        self.unreachable = unreachable


class MalformedReply(Exception):
    """A 200 reply that is not a chat completion with text."""


class _DeadlinePassed(Exception):
    """The attempt did not complete within its total deadline."""


@dataclass(frozen=True)
class Reply:
    """What daharness takes from a chat completion."""

    text: str
    finish_reason: str | None
    prompt_tokens: int
    completion_tokens: int


def parse_reply(body: str, content_type: str = "") -> Reply:
    """The text, finish reason and token counts of a chat completion body; MalformedReply with the reason
    when it is none. A `content` of null counts as an empty answer only when the model ran out of tokens
    (finish_reason "length"): then the model, not the server, failed to answer."""
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        snippet = " ".join(body.split())[:80]
        raise MalformedReply(
            f"the reply is not JSON ({content_type or 'no content type'}: {snippet!r})"
        ) from None
    if not isinstance(data, dict):
        raise MalformedReply(f"the reply is a JSON {type(data).__name__}, not an object")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        error = data.get("error")
        detail = f": {str(error.get('message') if isinstance(error, dict) else error)[:200]}" if error else ""
        raise MalformedReply(f"the reply has no choices{detail}")
    first = choices[0] if isinstance(choices[0], dict) else {}
    message = first.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    finish_reason = first.get("finish_reason")
    if content is None and finish_reason == "length":
        content = ""
    if not isinstance(content, str):
        raise MalformedReply(f"the reply's message has no text (content is {json.dumps(content)[:40]})")
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    return Reply(
        content,
        finish_reason if isinstance(finish_reason, str) else None,
        _count(usage.get("prompt_tokens")),
        _count(usage.get("completion_tokens")),
    )


def _count(value: Any) -> int:
    return value if isinstance(value, int) and value >= 0 else 0


def request_key(request: Mapping[str, Any]) -> str:
    """sha256 of the canonical JSON of the whole request."""
    canonical = json.dumps(request, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def retry_after_s(headers: Mapping[str, str]) -> float | None:
    """The server's requested wait: `retry-after-ms` (OpenAI), `Retry-After` in seconds or as a date."""
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, email.utils.parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def backoff_s(retry: int, retry_after: float | None = None) -> float:
    """Wait before retry number `retry` (0-based): the server's Retry-After, else full jitter; capped."""
    if retry_after is not None:
        return min(retry_after, BACKOFF_CAP_S)
    return random.uniform(0.0, min(BACKOFF_CAP_S, BACKOFF_BASE_S * 2**retry))


def _could_not_connect(exc: BaseException) -> bool:
    """Whether a connection error happened before any connection stood (refused, no route, DNS), as
    opposed to one dropped mid-reply: only the first says the endpoint is not there."""
    # by name: the SDK's HTTP library (httpx, or httpx2 in newer SDKs) wraps the socket's error
    return type(exc.__cause__).__name__ in ("ConnectError", "ConnectTimeout")


def _phrase(status: int) -> str:
    try:
        return f"{status} {http.HTTPStatus(status).phrase}"
    except ValueError:
        return str(status)


def _server_message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict) and "error" in body and isinstance(body["error"], dict):
        body = body["error"]
    message = body.get("message") if isinstance(body, dict) else None
    text = str(message or body or "").strip()
    return text[:300] + ("..." if len(text) > 300 else "")


def _openai() -> Any:
    """The openai SDK, imported on first use (not at module level: about a second). Its first import
    builds hundreds of models that live as long as the process; the garbage collector is paused meanwhile,
    as its passes over them would find nothing to free (12% of the import's time, measured)."""
    with collector_paused() if "openai" not in sys.modules else contextlib.nullcontext():
        import openai  # the statement, not sys.modules: it waits for another thread's import to end
    return openai


@functools.cache
def _http_library() -> Any:
    """The HTTP library the openai SDK is built on: httpx2 from its 3.0 on, httpx before."""
    try:
        import httpx2

        return httpx2
    except ImportError:
        import httpx

        return httpx


@functools.cache
def _tls_context() -> Any:
    """The TLS context the SDK's HTTP library would make by default (CA bundle, SSL_CERT_FILE), once."""
    return _http_library().create_ssl_context()


class ModelClient:
    def __init__(
        self, settings: ModelSettings, *, cache: ResponseCache | None = None, cache_mode: CacheMode = "on"
    ) -> None:
        if cache_mode not in ("on", "off", "refresh"):
            raise ValueError(f"cache_mode must be on, off or refresh, not {cache_mode!r}")
        self.settings = settings
        self.cache = cache if cache_mode != "off" else None
        self.cache_mode = cache_mode
        self._usage = Usage()
        self._usage_lock = threading.Lock()
        self._slots = _semaphore(settings)
        self._idle: list[Any] = []  # SDK clients not in use; one per attempt in flight
        self._idle_lock = threading.Lock()
        self._run_retries_left = settings.max_run_retries
        first = self._make_sdk()
        self._idle.append(first)
        self.url = settings.base_url or str(first.base_url).rstrip("/")

    def _make_sdk(self) -> Any:
        openai = _openai()

        settings = self.settings
        # local servers need no key, but the SDK refuses to start without one
        common: dict[str, Any] = {
            "api_key": os.environ.get(settings.api_key_env) or "not-needed",
            "timeout": settings.timeout_s,
            "max_retries": 0,  # retrying is ours: logged, jittered, bounded by settings.max_retries
            # each SDK client has its own connections, but all share one TLS context: making one loads
            # the CA bundle (about 70 ms of CPU), and concurrent requests make several SDK clients
            "http_client": openai.DefaultHttpxClient(verify=_tls_context()),
        }
        try:
            if settings.api_version:
                return openai.AzureOpenAI(
                    azure_endpoint=settings.base_url, api_version=settings.api_version, **common
                )
            return openai.OpenAI(base_url=settings.base_url, **common)
        except (openai.OpenAIError, ValueError) as exc:
            raise UserError(f"model {settings.model!r}: {exc}") from None

    @property
    def usage(self) -> Usage:
        with self._usage_lock:
            return replace(self._usage)

    @property
    def where(self) -> str:
        return f"model {self.settings.model!r} at {self.url}"

    def sampling(self, stop: list[str] | None = None, max_tokens: int | None = None) -> dict[str, Any]:
        """The sampling parameters to send: call arguments over settings, unset ones left out."""
        values = {key: getattr(self.settings, key) for key in SAMPLING_KEYS}
        if stop is not None:
            values["stop"] = stop
        if max_tokens is not None:
            values["max_tokens"] = max_tokens
        return {key: value for key, value in values.items() if value is not None and value != []}

    @property
    def run_retries_left(self) -> int:
        with self._usage_lock:
            return self._run_retries_left

    def complete(
        self,
        messages: list[dict[str, str]],
        *,
        stop: list[str] | None = None,
        max_tokens: int | None = None,
        deadline: float | None = None,
    ) -> Completion:
        """One chat completion. `deadline` (time.monotonic()) bounds the whole call, retries included,
        e.g. by the sample's wall-time limit."""
        started = time.monotonic()
        params = self.sampling(stop, max_tokens)
        epoch = _epoch.get()
        request = {"base_url": self.settings.base_url, "model": self.settings.model, "messages": messages}
        # epoch 1 is left out of the key: a one-epoch run keeps the keys it always had
        key = request_key({**request, **params, **({"epoch": epoch} if epoch != 1 else {})})
        if self.cache is not None and self.cache_mode == "on":
            hit = self.cache.get(key)
            if hit is not None and isinstance(hit.get("text"), str):
                usage = Usage(
                    int(hit.get("prompt_tokens") or 0), int(hit.get("completion_tokens") or 0), 0.0, 1
                )
                elapsed = time.monotonic() - started
                return self._count(
                    Completion(hit["text"], usage, True, elapsed, hit.get("finish_reason"), key)
                )
        reply, retries = self._create(messages, params, deadline)
        text, finish_reason = reply.text, reply.finish_reason
        prompt_tokens, completion_tokens = reply.prompt_tokens, reply.completion_tokens  # 0 when not sent
        cost = (
            prompt_tokens * self.settings.input_price_per_mtok
            + completion_tokens * self.settings.output_price_per_mtok
        ) / 1e6
        if self.cache is not None:
            self.cache.put(
                key,
                {
                    "text": text,
                    "finish_reason": finish_reason,
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "model": self.settings.model,
                    "base_url": self.settings.base_url,  # with the model and epoch: the notice's counts
                    "epoch": epoch,
                },
            )
        usage = Usage(prompt_tokens, completion_tokens, cost, 1, retries)
        return self._count(Completion(text, usage, False, time.monotonic() - started, finish_reason, key))

    def _count(self, completion: Completion) -> Completion:
        with self._usage_lock:
            self._usage = self._usage + completion.usage
        return completion

    def _create(
        self, messages: list[dict[str, str]], params: dict[str, Any], deadline: float | None
    ) -> tuple[Reply, int]:
        """One chat completion and the retries it took; retried on 429, 5xx, timeouts, dropped
        connections and malformed replies, within the call's and the run's retry budgets."""
        import openai

        retries = self.settings.max_retries
        reason = ""
        unreachable = False
        for attempt in range(retries + 1):
            retry_after, unreachable = None, False
            timeout = self.settings.timeout_s
            if deadline is not None:
                timeout = min(timeout, deadline - time.monotonic())
                if timeout <= 0:
                    reason = "the sample's time ran out" + (f" after: {reason}" if reason else "")
                    raise ModelUnavailableError(f"{self.where}: {reason}")
            try:
                with self._slots:  # held for the request only: a backoff wait frees the slot
                    return self._attempt(messages, params, timeout), attempt
            except openai.APIStatusError as exc:
                status = exc.status_code
                if status in _HINTS:
                    raise ModelFatalError(self._fatal_message(status, exc)) from None
                if status not in (408, 429) and status < 500:
                    raise ModelError(f"{self.where}: {_phrase(status)}: {_server_message(exc)}") from None
                reason = _phrase(status)
                retry_after = retry_after_s(exc.response.headers)
            except (_DeadlinePassed, openai.APITimeoutError):
                reason = f"no complete reply within {timeout:.3g} s"
            except openai.APIConnectionError as exc:
                reason = f"connection failed ({exc.__cause__ or exc})"
                unreachable = _could_not_connect(exc)
            except MalformedReply as exc:
                reason = f"malformed reply: {exc}"
            except openai.OpenAIError as exc:
                raise ModelError(f"{self.where}: {exc}") from None
            if attempt == retries:
                break
            if not self._take_run_retry():
                reason += f"; the run's budget of {self.settings.max_run_retries} retries is used up"
                break
            wait = backoff_s(attempt, retry_after)
            if deadline is not None:
                wait = max(0.0, min(wait, deadline - time.monotonic()))
            log.warning(
                "%s: %s; retry %d/%d in %.2f s (%d retries left for the run)",
                self.where, reason, attempt + 1, retries, wait, self.run_retries_left,
            )  # fmt: skip
            time.sleep(wait)
        raise ModelUnavailableError(
            f"{self.where}: {reason}, still after {attempt} retries", unreachable=unreachable
        )

    def _take_run_retry(self) -> bool:
        with self._usage_lock:
            if self._run_retries_left <= 0:
                return False
            self._run_retries_left -= 1
            return True

    def _attempt(self, messages: list[dict[str, str]], params: dict[str, Any], timeout: float) -> Reply:
        """One request, abandoned when it is not complete after `timeout` seconds in all: it runs in a
        worker thread, and its SDK client is closed then, which ends the worker at its next read."""
        sdk = self._take_sdk()
        outcome: dict[str, Any] = {}
        finished = threading.Event()

        def request() -> None:
            try:
                # the SDK's request as it is, without its typed `create` (which walks every message
                # of the prompt to convert it: a few ms of CPU per call, held from the other samples)
                raw = sdk.post(
                    "/chat/completions",
                    body={"model": self.settings.model, "messages": messages, **params},
                    cast_to=_http_library().Response,
                    options={"timeout": timeout},
                )
                outcome["reply"] = parse_reply(raw.text, raw.headers.get("content-type", ""))
            except BaseException as exc:  # handed to the caller's thread
                outcome["error"] = exc
            finally:
                finished.set()

        threading.Thread(target=request, name="model-request", daemon=True).start()
        if not finished.wait(timeout):
            with contextlib.suppress(Exception):
                sdk.close()
            raise _DeadlinePassed
        import openai

        # a client whose last request ended with a complete response may serve the next one
        if "reply" in outcome or isinstance(outcome.get("error"), MalformedReply | openai.APIStatusError):
            self._put_sdk(sdk)
        else:
            with contextlib.suppress(Exception):
                sdk.close()
        if "error" in outcome:
            raise outcome["error"]
        return outcome["reply"]

    def _take_sdk(self) -> Any:
        with self._idle_lock:
            if self._idle:
                return self._idle.pop()
        return self._make_sdk()

    def _put_sdk(self, sdk: Any) -> None:
        with self._idle_lock:
            self._idle.append(sdk)

    def _fatal_message(self, status: int, exc: Any) -> str:
        env = self.settings.api_key_env
        hint = _HINTS[status].replace("${env}", f"${env}")
        if status == 401 and not os.environ.get(env):
            hint += " (it is not set)"
        detail = _server_message(exc)
        return f"{self.where}: {_phrase(status)} - {hint}" + (f" (server: {detail})" if detail else "")
