"""What a run checks and says about its models before its first sample: that something answers at each
endpoint (a dead one used to cost every sample its retries, 31 s, before the run stopped), and what the
response cache will answer in the model's place."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from daharness.models.cache import ResponseCache
from daharness.models.client import _http_library, _openai, _tls_context
from daharness.models.settings import ModelSettings

CHECK_TIMEOUT_S = 5.0  # to connect, then to answer: a server that connects but is slow to answer is there
OPENAI_URL = "https://api.openai.com/v1"  # the SDK's default endpoint


def endpoint_url(settings: ModelSettings) -> str | None:
    """The URL requests for `settings` go to, as the SDK chooses it (None: an Azure endpoint left to its
    environment variable, which the SDK reads)."""
    if settings.base_url:
        return settings.base_url
    if settings.api_version:
        return os.environ.get("AZURE_OPENAI_ENDPOINT") or None
    return os.environ.get("OPENAI_BASE_URL") or OPENAI_URL


def unreachable_reason(url: str, timeout_s: float = CHECK_TIMEOUT_S) -> str | None:
    """Why no connection to `url` can be made (refused, no route, unknown host, none within `timeout_s`),
    or None. One GET of its `/models`, without the key: any answer, an error status included, says
    something listens there; what it says is the run's to find out (a wrong key or model stops it at once)."""
    http = _http_library()
    try:
        # the SDK's own client: the same proxies and certificates as the requests that follow
        with _openai().DefaultHttpxClient(verify=_tls_context(), timeout=timeout_s) as client:
            client.get(url.rstrip("/") + "/models")
    except http.ConnectTimeout:
        return f"no connection within {timeout_s:g} s"
    except http.ConnectError as exc:
        return str(exc) or type(exc).__name__
    except Exception:  # connected, then slow or strange: the run's retries and limits take it from here
        return None
    return None


@dataclass(frozen=True)
class RunModels:
    """The models a run's agent asks (its model, a reformat model, a user simulator) and how their replies
    are cached."""

    settings: tuple[ModelSettings, ...]
    cache_mode: str = "off"
    cache_path: Path | None = None

    @classmethod
    def of(
        cls, *settings: ModelSettings | None, cache_mode: str = "off", cache_path: Path | None = None
    ) -> RunModels:
        named: list[ModelSettings] = []
        for one in settings:
            if one is not None and one not in named:  # the same model given twice is asked once
                named.append(one)
        return cls(tuple(named), cache_mode, cache_path)

    def unreachable(self) -> str | None:
        """One line naming the first endpoint nothing answers at, or None (each endpoint looked at once)."""
        for url, settings in {endpoint_url(s): s for s in self.settings}.items():
            if url is not None and (reason := unreachable_reason(url)):
                return (
                    f"model {settings.model!r}: nothing answers at {url} ({reason}); no sample was started: "
                    "start the server or correct the URL, then run the same command"
                )
        return None

    def cache_notice(self, epochs: int) -> str | None:
        """What the response cache will do in this run (of `epochs` repeats at most), said before its first
        sample: why replies may come from it, and how many it holds that could; None when it is off."""
        if self.cache_mode == "off" or self.cache_path is None or not self.settings:
            return None
        where = f"response cache ({self.cache_path}, --cache {self.cache_mode})"
        if self.cache_mode == "refresh":
            return f"{where}: every request asks the model, and its reply replaces the one kept"
        cache = ResponseCache(self.cache_path)
        try:
            counts = [(s, cache.stored(s.model, s.base_url, epochs)) for s in self.settings]
        finally:
            cache.close()
        if not any(count for _, count in counts):
            return f"{where}: no reply of this run's model kept yet; every reply is kept for a later run"
        held = ", ".join(
            f"{count} of model {s.model!r} at {endpoint_url(s) or 'its Azure endpoint'}"
            for s, count in counts
        )
        return (
            f"{where}: it holds earlier replies ({held}); a request identical to one of them (the same "
            "messages, sampling and epoch) gets that reply, not a new one from the model (--cache off asks "
            "afresh)"
        )
