"""The model client against a real OpenAI-compatible HTTP server on 127.0.0.1: replies, usage and cost,
retries, fatal errors, the cache, the concurrency limit, sampling parameters, and models files."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from fake_openai import Drop, Fail, FakeOpenAI, Raw, Reply, Trickle
from helpers import last_line_printed

from daharness.core.errors import UserError
from daharness.models import (
    ModelClient,
    ModelFatalError,
    ModelSettings,
    ModelUnavailableError,
    ResponseCache,
    Usage,
    load_model_file,
    resolve_model,
)
from daharness.models import client as client_module

MESSAGES = [{"role": "user", "content": "What is the mean of the column?"}]


@pytest.fixture(autouse=True)
def fast_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(client_module, "BACKOFF_BASE_S", 0.01)


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as fake:
        yield fake


def _client(
    server: FakeOpenAI, cache: ResponseCache | None = None, cache_mode: str = "on", **settings: object
) -> ModelClient:
    model = ModelSettings.model_validate({"model": "test-model", "base_url": server.base_url, **settings})
    return ModelClient(model, cache=cache, cache_mode=cache_mode)  # type: ignore[arg-type]


def test_reply_with_usage_and_cost(server: FakeOpenAI) -> None:
    server.script([Reply("The mean is 3.5", prompt_tokens=1000, completion_tokens=500)])
    client = _client(server, input_price_per_mtok=2.0, output_price_per_mtok=10.0)
    done = client.complete(MESSAGES)
    assert done.text == "The mean is 3.5" and done.finish_reason == "stop" and not done.cached
    assert done.usage == Usage(
        prompt_tokens=1000, completion_tokens=500, cost_usd=pytest.approx(0.007), calls=1
    )
    assert len(done.request_id) == 64 and done.latency_s > 0
    assert server.requests[0]["model"] == "test-model" and server.requests[0]["messages"] == MESSAGES
    client.complete(MESSAGES)  # default responder: "ok", tokens from the text lengths
    total = client.usage
    assert total.calls == 2 and total.prompt_tokens == 1000 + len(MESSAGES[0]["content"]) // 4
    assert total.to_dict() == {"prompt_tokens": total.prompt_tokens, "completion_tokens": 500,
                               "cost_usd": total.cost_usd, "calls": 2, "retries": 0}  # fmt: skip


def test_missing_usage(server: FakeOpenAI) -> None:
    server.script([Reply("", usage=False)])
    done = _client(server, input_price_per_mtok=5.0).complete(MESSAGES)
    assert done.text == "" and done.usage == Usage(0, 0, 0.0, 1)


_EMPTY_CHOICES = '{"id": "x", "object": "chat.completion", "choices": []}'


@pytest.mark.parametrize(
    ("malformed", "reason"),
    [
        (Raw("<html><body>502 Bad Gateway</body></html>"), "the reply is not JSON (text/html: '<html>"),
        (Raw(_EMPTY_CHOICES, content_type="application/json"), "the reply has no choices"),
        (Reply(None), "the reply's message has no text (content is null)"),
    ],
    ids=["html", "empty-choices", "null-content"],
)
def test_malformed_replies_are_retried_then_reported_as_outages(
    server: FakeOpenAI, malformed: object, reason: str
) -> None:
    server.script([malformed, Reply("fine")])
    done = _client(server, max_retries=2).complete(MESSAGES)
    assert done.text == "fine" and done.usage.retries == 1 and len(server.requests) == 2
    server.script([malformed] * 3)
    with pytest.raises(ModelUnavailableError) as caught:
        _client(server, max_retries=2).complete(MESSAGES)
    assert f"malformed reply: {reason}" in str(caught.value) and "still after 2 retries" in str(caught.value)
    assert len(server.requests) == 5


def test_null_content_after_running_out_of_tokens_is_an_empty_answer() -> None:
    body = '{"choices": [{"message": {"content": null}, "finish_reason": "length"}]}'
    assert client_module.parse_reply(body).text == ""
    with pytest.raises(client_module.MalformedReply, match="JSON list"):
        client_module.parse_reply("[1, 2]")


def test_a_trickling_reply_is_cut_at_the_total_deadline(server: FakeOpenAI) -> None:
    # headers at once, then one byte every 0.3 s: each read is quick, the whole body would take ~60 s
    server.script([Trickle(interval_s=0.3), Trickle(interval_s=0.3)])
    with pytest.raises(ModelUnavailableError, match=r"no complete reply within 1 s, still after 1 retries"):
        _client(server, timeout_s=1.0, max_retries=1).complete(MESSAGES)
    assert len(server.requests) == 2


def test_the_callers_deadline_bounds_the_call_and_its_retries(server: FakeOpenAI) -> None:
    server.script([Fail(500), Reply("late", delay_s=30)])
    with pytest.raises(ModelUnavailableError, match="the sample's time ran out after: no complete reply"):
        _client(server, max_retries=5).complete(MESSAGES, deadline=time.monotonic() + 1.0)
    assert len(server.requests) == 2


def test_the_run_retry_budget_is_shared_by_every_call(
    server: FakeOpenAI, caplog: pytest.LogCaptureFixture
) -> None:
    server.script([Fail(500)] * 10)
    client = _client(server, max_retries=5, max_run_retries=2)
    used_up = pytest.raises(ModelUnavailableError, match="the run's budget of 2 retries is used up")
    with caplog.at_level(logging.WARNING, logger="daharness.models"), used_up:
        client.complete(MESSAGES)
    assert len(server.requests) == 3 and client.run_retries_left == 0
    assert "(1 retries left for the run)" in caplog.records[0].getMessage()
    with pytest.raises(ModelUnavailableError, match="still after 0 retries"):
        client.complete([{"role": "user", "content": "another question"}])
    assert len(server.requests) == 4  # no retry left: one attempt only


@pytest.mark.parametrize("failure", [Fail(429, retry_after=0), Fail(500), Fail(503), Drop()], ids=repr)
def test_retries_then_success(server: FakeOpenAI, failure: object, caplog: pytest.LogCaptureFixture) -> None:
    server.script([failure, failure, Reply("finally")])
    with caplog.at_level(logging.WARNING, logger="daharness.models"):
        done = _client(server, max_retries=3).complete(MESSAGES)
    assert done.text == "finally" and len(server.requests) == 3
    retries = [r for r in caplog.records if r.name == "daharness.models"]
    assert (
        len(retries) == 2
        and "retry 1/3 in" in retries[0].getMessage()
        and "test-model" in retries[0].getMessage()
    )


def test_timeout_is_retried(server: FakeOpenAI) -> None:
    server.script([Reply("late", delay_s=1.0)])
    done = _client(server, timeout_s=0.2, max_retries=1).complete(MESSAGES)
    assert done.text == "ok" and len(server.requests) == 2


def test_retry_after_is_honoured_and_capped(monkeypatch: pytest.MonkeyPatch) -> None:
    assert client_module.backoff_s(0, retry_after=2.5) == 2.5
    assert client_module.backoff_s(0, retry_after=3600) == client_module.BACKOFF_CAP_S
    assert client_module.retry_after_s({"retry-after": "7"}) == 7.0
    assert client_module.retry_after_s({"retry-after-ms": "250"}) == 0.25
    assert client_module.retry_after_s({}) is None
    monkeypatch.setattr(client_module, "BACKOFF_BASE_S", 0.5)
    waits = [client_module.backoff_s(n) for n in range(12) for _ in range(20)]
    assert all(0 <= w <= client_module.BACKOFF_CAP_S for w in waits) and max(waits[:20]) <= 0.5


def test_retries_exhausted(server: FakeOpenAI) -> None:
    server.script([Fail(500)] * 10)
    with pytest.raises(ModelUnavailableError, match=r"500 Internal Server Error, still after 2 retries"):
        _client(server, max_retries=2).complete(MESSAGES)
    assert len(server.requests) == 3


@pytest.mark.parametrize(
    ("status", "words"), [(401, "check the key in $OPENAI_API_KEY"), (404, "model name")]
)
def test_fatal_errors_stop_at_once(server: FakeOpenAI, status: int, words: str) -> None:
    server.script([Fail(status)])
    with pytest.raises(ModelFatalError) as caught:
        _client(server).complete(MESSAGES)
    message = str(caught.value)
    assert f"model 'test-model' at {server.base_url}: {status}" in message and words in message
    assert len(server.requests) == 1


def test_cache_modes(server: FakeOpenAI, tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "deep" / "cache.sqlite")
    first = _client(server, cache, temperature=0.2).complete(MESSAGES)
    again = _client(server, cache, temperature=0.2).complete(MESSAGES)
    assert len(server.requests) == 1 and again.cached and not first.cached
    assert again.text == first.text and again.request_id == first.request_id
    assert again.usage.prompt_tokens == first.usage.prompt_tokens and again.usage.cost_usd == 0.0
    _client(server, cache, temperature=0.7).complete(MESSAGES)  # another temperature: another request
    assert len(server.requests) == 2
    off = _client(server, cache, "off", temperature=0.2)
    assert not off.complete(MESSAGES).cached and not off.complete(MESSAGES).cached
    assert len(server.requests) == 4
    server.responder = lambda request: "fresh"
    refreshed = _client(server, cache, "refresh", temperature=0.2).complete(MESSAGES)
    assert not refreshed.cached and refreshed.text == "fresh" and len(server.requests) == 5
    reused = _client(server, cache, temperature=0.2).complete(MESSAGES)
    assert reused.cached and reused.text == "fresh" and len(server.requests) == 5
    # the file keeps them for the next process
    cache.close()
    reopened = _client(server, ResponseCache(tmp_path / "deep" / "cache.sqlite"), temperature=0.2)
    assert reopened.complete(MESSAGES).text == "fresh" and len(server.requests) == 5


def test_cache_key_covers_url_model_and_messages(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    keys = set()
    with FakeOpenAI() as one, FakeOpenAI() as two:
        for server in (one, two):
            for model in ("a", "b"):
                for messages in (MESSAGES, [{"role": "user", "content": "other"}]):
                    keys.add(_client(server, cache, model=model).complete(messages).request_id)
        assert len(keys) == 8 and len(one.requests) == len(two.requests) == 4


def test_concurrency_limit_across_clients(server: FakeOpenAI) -> None:
    lock = threading.Lock()
    state = {"now": 0, "peak": 0}

    def slow(request: dict) -> str:
        with lock:
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
        time.sleep(0.2)
        with lock:
            state["now"] -= 1
        return "done"

    server.responder = slow
    clients = [_client(server, max_concurrency=2) for _ in range(3)]  # one limit for all of them
    with ThreadPoolExecutor(6) as pool:
        results = list(pool.map(lambda i: clients[i % 3].complete(MESSAGES), range(6)))
    assert [r.text for r in results] == ["done"] * 6 and len(server.requests) == 6
    assert state["peak"] == 2


def test_without_a_limit_every_request_of_the_run_is_in_flight_at_once(server: FakeOpenAI) -> None:
    """The default sets no limit of its own: a run's -j 16 means 16 requests at once, not 8."""
    together = threading.Barrier(12, timeout=30)  # passes only once all twelve requests are at the server

    def meet(request: dict) -> str:
        together.wait()
        return "done"

    server.responder = meet
    client = _client(server)
    with ThreadPoolExecutor(12) as pool:
        results = list(pool.map(lambda i: client.complete(MESSAGES).text, range(12)))
    assert results == ["done"] * 12 and not together.broken


def test_an_azure_endpoint_gets_the_request_at_its_deployment(server: FakeOpenAI) -> None:
    root = server.base_url.removesuffix("/v1")
    client = _client(server, base_url=root, api_version="2024-10-21", model="gpt-4o-deployment")
    assert client.complete(MESSAGES).text == "ok"
    assert server.paths == ["/openai/deployments/gpt-4o-deployment/chat/completions?api-version=2024-10-21"]
    assert server.requests[0]["messages"] == MESSAGES


def test_sampling_parameters_reach_the_server(server: FakeOpenAI) -> None:
    server.responder = lambda request: "Thought: run it\nObservation: made up"
    client = _client(server, temperature=0.2, top_p=0.9, max_tokens=64, seed=7, stop=["END"])
    done = client.complete(MESSAGES, stop=["Observation:"], max_tokens=32)
    sent = server.requests[0]
    assert {k: sent[k] for k in ("temperature", "top_p", "max_tokens", "stop", "seed")} == {
        "temperature": 0.2, "top_p": 0.9, "max_tokens": 32, "stop": ["Observation:"], "seed": 7,
    }  # fmt: skip
    assert done.text == "Thought: run it\n" and done.finish_reason == "stop"
    _client(server).complete(MESSAGES)
    assert set(server.requests[1]) == {"model", "messages"}


def test_local_server_needs_no_key(server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    assert _client(server, api_key_env="NO_SUCH_KEY_VAR").complete(MESSAGES).text == "ok"


MODELS_TOML = """
[models.gpt4o]
model = "gpt-4o"
temperature = 0.2
top_p = 1.0
input_price_per_mtok = 2.5
output_price_per_mtok = 10.0

[models.local-qwen]
model = "Qwen/Qwen2.5-7B-Instruct"
base_url = "http://localhost:8000/v1"
api_key_env = "VLLM_KEY"
stop = ["###"]
"""


def test_model_file_and_resolution(tmp_path: Path) -> None:
    path = tmp_path / "models.toml"
    path.write_text(MODELS_TOML)
    models = load_model_file(path)
    assert set(models) == {"gpt4o", "local-qwen"}
    assert models["gpt4o"].model == "gpt-4o" and models["gpt4o"].output_price_per_mtok == 10.0
    assert models["local-qwen"].api_key_env == "VLLM_KEY" and models["local-qwen"].stop == ["###"]

    plain = {"config_file": path, "base_url": None, "api_key_env": None}
    named = resolve_model("gpt4o", **plain, overrides={"temperature": None, "seed": 3})
    assert named.model == "gpt-4o" and named.temperature == 0.2 and named.seed == 3 and named.base_url is None
    local = resolve_model("local-qwen", config_file=path, base_url="http://gpu:9000/v1", api_key_env="K",
                          overrides={"temperature": 0.0})  # fmt: skip
    assert local.base_url == "http://gpu:9000/v1" and local.api_key_env == "K"
    assert local.temperature == 0.0 and local.stop == ["###"]
    bare = resolve_model("llama3.1", config_file=None, base_url="http://localhost:11434/v1", api_key_env=None,
                         overrides={"max_tokens": 512, "top_p": None})  # fmt: skip
    assert bare == ModelSettings(model="llama3.1", base_url="http://localhost:11434/v1", max_tokens=512)
    # a name the file does not have is refused, not sent as a model id to the OpenAI API (issue 43, item 3)
    with pytest.raises(UserError) as refused:
        resolve_model("gpt-4o-mini", **plain, overrides={})
    assert str(refused.value) == f"{path}: no model named 'gpt-4o-mini' (it names gpt4o, local-qwen)"
    with pytest.raises(UserError, match="--temperature"):
        resolve_model("gpt4o", **plain, overrides={"temperature": "hot"})


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('[models.a]\nmodel = "m"\ntemprature = 0.2\n', "models.a.temprature: unknown field"),
        ('[models.a]\nmodel = "m"\nmax_concurrency = 0\n', "models.a.max_concurrency"),
        ("[models.a]\ntemperature = 0.2\n", "models.a.model"),
        ("[models.a\n", "invalid TOML"),
        ('[model.a]\nmodel = "m"\n', "unknown key 'model'"),
        (
            '[models.a]\nmodel = "m"\nbase_url = "localhost:8000/v1"\n',
            "models.a.base_url: 'localhost",
        ),
    ],
)
def test_bad_model_files(tmp_path: Path, text: str, words: str) -> None:
    path = tmp_path / "models.toml"
    path.write_text(text)
    with pytest.raises(UserError) as caught:
        load_model_file(path)
    assert str(path) in str(caught.value) and words in str(caught.value)
    with pytest.raises(UserError, match="cannot read"):
        load_model_file(tmp_path / "missing.toml")


def test_fake_server_lists_models(server: FakeOpenAI) -> None:
    listed = _client(server)._take_sdk().models.list()
    assert [m.id for m in listed.data] == ["fake-model"]


def test_the_sdk_is_imported_without_garbage_collection_and_the_collector_runs_again_after() -> None:
    """Its first import builds hundreds of models that live as long as the process: the collector's
    passes meanwhile would free nothing (12% of the import's time)."""
    probe = (
        "import gc, sys\n"
        "from daharness.models.client import _openai\n"
        "passes = []\n"
        "def during_the_import(phase, info):  # the pass after it, on the import's leftovers, is welcome\n"
        "    sdk = sys.modules.get('openai')\n"
        "    if phase == 'start' and sdk is not None and getattr(sdk.__spec__, '_initializing', False):\n"
        "        passes.append(info)\n"
        "gc.callbacks.append(during_the_import)\n"
        "sdk = _openai()\n"
        "print(len(passes), gc.isenabled(), sdk.__name__)\n"
    )
    assert last_line_printed(probe) == "0 True openai"


def test_a_model_client_made_while_another_thread_imports_the_sdk_gets_the_whole_sdk() -> None:
    """The first import runs on one thread; another waits for it, not take the half-made module."""
    probe = (
        "import sys, threading\n"
        "from daharness.models.client import _openai\n"
        "first = threading.Thread(target=_openai)\n"
        "first.start()\n"
        "while 'openai' not in sys.modules:  # until the first import has begun\n"
        "    pass\n"
        "print(hasattr(_openai(), 'DefaultHttpxClient'))\n"
        "first.join()\n"
    )
    assert last_line_printed(probe) == "True"


def test_the_look_at_an_endpoint_takes_any_answer_as_someone_there(server: FakeOpenAI) -> None:
    """Only a connection that cannot be made is a dead endpoint: a proxy without /models (404) is there."""
    import socket

    from daharness.models.preflight import RunModels, unreachable_reason

    assert unreachable_reason(server.base_url) is None  # 200
    assert unreachable_reason(server.base_url.removesuffix("/v1")) is None  # 404
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}/v1"
    assert unreachable_reason(dead) == "[Errno 111] Connection refused"
    models = RunModels.of(
        ModelSettings(model="m", base_url=server.base_url), None, ModelSettings(model="judge", base_url=dead)
    )
    assert models.unreachable() == (
        f"model 'judge': nothing answers at {dead} ([Errno 111] Connection refused); no sample was started: "
        "start the server or correct the URL, then run the same command"
    )
    assert server.requests == []  # the look sends no chat request


def test_the_cache_keeps_each_epoch_apart_and_counts_what_it_holds(
    server: FakeOpenAI, tmp_path: Path
) -> None:
    from daharness.models import requests_of_epoch

    settings = ModelSettings(model="m", base_url=server.base_url)
    cache = ResponseCache(tmp_path / "c.sqlite")
    client = ModelClient(settings, cache=cache, cache_mode="on")
    numbers = iter(range(1, 100))
    server.responder = lambda request: f"reply {next(numbers)}"
    first = client.complete(MESSAGES).text
    with requests_of_epoch(2):
        second = client.complete(MESSAGES).text
        assert client.complete(MESSAGES).text == second  # the same epoch: from the cache
    assert client.complete(MESSAGES).text == first
    assert (first, second, len(server.requests)) == ("reply 1", "reply 2", 2)
    assert [cache.stored("m", server.base_url, epochs) for epochs in (1, 2)] == [1, 2]
    assert cache.stored("m", "http://elsewhere/v1", 2) == 0 and cache.stored("other", server.base_url, 2) == 0
