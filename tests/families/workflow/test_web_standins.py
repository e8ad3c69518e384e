"""The local stand-ins of the public web APIs that Spider2-V's application tasks call (issue 25): the
proxy answers each API in its format over HTTP and HTTPS with a certificate only the sandbox trusts,
refuses other hosts, and the loader supports a task whose only outside calls have a stand-in."""

from __future__ import annotations

import json
import ssl
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from daharness.families.workflow import apps, limits
from daharness.families.workflow.apps import web_standins


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    folder = tmp_path_factory.mktemp("webapis")
    certificates = web_standins.certificates()
    (folder / "server.pem").write_text(certificates.server_pem)
    (folder / "ca.pem").write_text(certificates.authority_pem)
    server = subprocess.Popen(
        [sys.executable, str(web_standins.WEBAPIS), "serve", str(folder / "server.pem"), "0"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        line = server.stdout.readline() if server.stdout else ""  # printed once it listens
        assert line.startswith("webapis: serving on "), line
        yield f"http://{line.split()[-1]}", folder / "ca.pem"
    finally:
        server.kill()
        server.wait()


def _get(proxy: tuple[str, Path], url: str, *, trusted: bool = True) -> bytes:
    address, authority = proxy
    context = ssl.create_default_context(cafile=str(authority) if trusted else None)
    opener = urllib.request.build_opener(
        urllib.request.ProxyHandler({"http": address, "https": address}),
        urllib.request.HTTPSHandler(context=context),
    )
    with opener.open(url, timeout=30) as response:
        return response.read()


def test_hacker_news_over_https(proxy: tuple[str, Path]) -> None:
    ids = json.loads(_get(proxy, "https://hacker-news.firebaseio.com/v0/topstories.json"))
    assert len(ids) == 500 and len(set(ids)) == 500 and all(isinstance(i, int) for i in ids)
    assert json.loads(_get(proxy, "https://hacker-news.firebaseio.com/v0/topstories.json")) == ids
    story = json.loads(_get(proxy, f"https://hacker-news.firebaseio.com/v0/item/{ids[0]}.json"))
    assert story["id"] == ids[0] and story["type"] == "story" and story["title"]


def test_recorded_and_generated_apod_days(proxy: tuple[str, Path]) -> None:
    url = "https://api.nasa.gov/planetary/apod?api_key=DEMO_KEY&date="
    recorded = json.loads(_get(proxy, url + "2024-04-13"))
    assert recorded["hdurl"] == "https://apod.nasa.gov/apod/image/2404/pinholepalm.png"
    generated = json.loads(_get(proxy, url + "2024-05-02"))
    assert generated["date"] == "2024-05-02" and generated["hdurl"].startswith(
        "https://apod.nasa.gov/apod/image/2405/"
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        _get(proxy, "https://api.nasa.gov/planetary/apod?date=2024-04-13")
    assert refused.value.code == 403  # no api_key, as the real API answers


def test_other_apis_in_their_formats(proxy: tuple[str, Path]) -> None:
    drink = json.loads(_get(proxy, "https://www.thecocktaildb.com/api/json/v1/1/random.php"))["drinks"][0]
    assert (
        drink["strDrink"]
        and drink["strAlcoholic"] in ("Alcoholic", "Non alcoholic")
        and drink["strInstructions"]
    )
    activity = json.loads(_get(proxy, "https://www.boredapi.com/api/activity"))
    assert 0 <= activity["accessibility"] <= 1 and activity["activity"]
    weather = _get(proxy, "http://wttr.in/HongKong?format=%l:+%c+%t+%h").decode()  # plain HTTP too
    assert weather.startswith("HongKong: ") and weather.rstrip().endswith("%") and "°C" in weather


def test_no_stand_in_no_internet(proxy: tuple[str, Path]) -> None:
    with pytest.raises(urllib.error.URLError, match="502"):
        _get(proxy, "https://www.google.com/")
    with pytest.raises(urllib.error.HTTPError) as plain:
        _get(proxy, "http://example.org/")
    assert plain.value.code == 502 and b"no local stand-in for example.org" in plain.value.read()


def test_only_the_sandbox_trusts_the_certificate(proxy: tuple[str, Path]) -> None:
    with pytest.raises(urllib.error.URLError, match="CERTIFICATE_VERIFY_FAILED"):
        _get(proxy, "https://wttr.in/HongKong", trusted=False)


def test_a_task_whose_calls_have_stand_ins_is_supported(tmp_path: Path) -> None:
    hosts = web_standins.standin_hosts()
    (tmp_path / "assets.py").write_text(
        'requests.get("https://hacker-news.firebaseio.com/v0/topstories.json")\n'
    )
    assert limits.web_api_need(tmp_path, "Save the top stories.", hosts) is None
    (tmp_path / "movies.py").write_text('pd.read_csv("https://raw.githubusercontent.com/x/y/master/a.csv")\n')
    assert "raw.githubusercontent.com" in (limits.web_api_need(tmp_path, "Load the movies.", hosts) or "")


def test_what_the_checks_of_application_tasks_may_do(tmp_path: Path) -> None:
    script = tmp_path / "eval.sh"
    script.write_text("pip install pytest > /dev/null 2>&1\npytest test_dag.py\n")
    assert limits.script_need(script, apps.SERVICE_PORTS, installed={"pytest"}.__contains__) is None
    assert "internet" in (limits.script_need(script, apps.SERVICE_PORTS, installed=set().__contains__) or "")
    script.write_text("psql -h 172.17.0.1 -U user -d jaffle_shop -c 'select 1'\n")
    assert "172.17.0.1" in (limits.script_need(script, apps.SERVICE_PORTS, setup=True) or "")
    script.write_text("curl -s -o assets.html http://localhost:8004/locations/proj/assets\n")
    assert limits.script_need(script, apps.SERVICE_PORTS, agent_servers=True) is None
    assert "localhost:8004" in (limits.script_need(script, apps.SERVICE_PORTS) or "")
