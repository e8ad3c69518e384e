"""Local stand-ins for the public web APIs that Spider2-V's application tasks call (issue 25).

The sandbox has no internet. Its programs reach these hosts through a proxy on 127.0.0.1:3128
(HTTP_PROXY / HTTPS_PROXY in their environment): plain HTTP is answered directly, HTTPS after a CONNECT
with a certificate for the stand-in hosts signed by a certificate authority that only the sandbox
trusts (SSL_CERT_FILE, REQUESTS_CA_BUNDLE, CURL_CA_BUNDLE). Any other host gets 502 with a sentence
saying there is no stand-in for it.

The answers are generated from a fixed seed (the same request gives the same answer in every sample,
before and after the agent), in each API's response format. A few real values that official checks
compare with are recorded in `recorded/` with their source. Standard library only: it runs with the
sandbox's own python3, where daharness is not importable.

  python3 webapis.py serve CERTIFICATE_PEM [PORT]     # the proxy, in the foreground (port 3128)
  python3 webapis.py hosts                     # the hosts with a stand-in, one per line
"""

from __future__ import annotations

import datetime
import hashlib
import json
import random
import socketserver
import ssl
import sys
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

PORT = 3128
RECORDED = Path(__file__).resolve().parent / "recorded"
Answer = tuple[int, str, bytes]  # status, content type, body


def _rng(*parts: object) -> random.Random:
    """A generator seeded by what is asked, so that answers never depend on earlier requests."""
    digest = hashlib.sha256("\x00".join(map(str, parts)).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def _json(value: object, status: int = 200) -> Answer:
    return status, "application/json; charset=utf-8", json.dumps(value).encode()


def _text(value: str, status: int = 200) -> Answer:
    return status, "text/plain; charset=utf-8", value.encode()


def _not_found(host: str, path: str) -> Answer:
    return _text(f"daharness stand-in of {host}: nothing at {path}\n", 404)


# --- Hacker News (hacker-news.firebaseio.com/v0) ---------------------------------------------------------

_HN_WORDS = (
    "rust", "python", "database", "compiler", "open", "source", "release", "startup", "model", "data", "linux", "browser", "privacy", "security", "kernel", "learning", "language", "cloud", "storage", "network", "graph", "search", "editor", "terminal", "memory", "index", "query", "engine", "protocol", "design", "paper", "research", "show", "ask", "launch", "why", "how", "new", "faster", "simple",
)  # fmt: skip
_HN_FIRST_ID = 40_100_000


def _hn_top_ids() -> list[int]:
    rng = _rng("hn", "top")
    return sorted(rng.sample(range(_HN_FIRST_ID, _HN_FIRST_ID + 5000), 500), key=lambda _: rng.random())


def _hn_item(item_id: int) -> dict[str, object]:
    rng = _rng("hn", item_id)
    title = " ".join(rng.choice(_HN_WORDS) for _ in range(rng.randint(4, 9))).capitalize()
    return {
        "by": f"user{rng.randint(1, 9999)}",
        "descendants": rng.randint(0, 300),
        "id": item_id,
        "kids": sorted(rng.sample(range(item_id + 1, item_id + 4000), rng.randint(0, 6))),
        "score": rng.randint(1, 900),
        "time": 1_717_200_000 + (item_id - _HN_FIRST_ID) * 60,
        "title": title,
        "type": "story",
        "url": f"https://example.com/{title.lower().replace(' ', '-')}",
    }


def hacker_news(path: str, query: dict[str, list[str]]) -> Answer:
    name = path.removeprefix("/v0/")
    if name in ("topstories.json", "newstories.json", "beststories.json"):
        return _json(_hn_top_ids())
    if name == "maxitem.json":
        return _json(_HN_FIRST_ID + 5000)
    if name.startswith("item/") and name.endswith(".json") and name[5:-5].isdigit():
        return _json(_hn_item(int(name[5:-5])))
    return _json(None)  # Firebase answers `null` for what does not exist


# --- NASA's Astronomy Picture of the Day (api.nasa.gov/planetary/apod) --------------------------------


def _apod_recorded() -> dict[str, dict[str, str]]:
    path = RECORDED / "apod.json"
    return json.loads(path.read_text(encoding="utf-8"))["days"] if path.is_file() else {}


def _apod_day(day: datetime.date) -> dict[str, object]:
    rng = _rng("apod", day)
    name = f"{rng.choice(['Nebula', 'Galaxy', 'Eclipse', 'Aurora', 'Comet', 'Moon'])}{rng.randint(10, 99)}"
    folder = f"https://apod.nasa.gov/apod/image/{day:%y%m}"
    entry: dict[str, object] = {
        "copyright": "daharness stand-in",
        "date": day.isoformat(),
        "explanation": f"A generated stand-in of the Astronomy Picture of the Day for {day.isoformat()}.",
        "hdurl": f"{folder}/{name}.jpg",
        "media_type": "image",
        "service_version": "v1",
        "title": f"{name} (stand-in)",
        "url": f"{folder}/{name}_1024.jpg",
    }
    entry.update(_apod_recorded().get(day.isoformat(), {}))
    return entry


def apod(path: str, query: dict[str, list[str]]) -> Answer:
    if path.rstrip("/") != "/planetary/apod":
        return _not_found("api.nasa.gov", path)
    if not query.get("api_key"):
        return _json({"error": {"code": "API_KEY_MISSING", "message": "No api_key was supplied."}}, 403)
    try:
        if "start_date" in query:
            first = datetime.date.fromisoformat(query["start_date"][0])
            last = datetime.date.fromisoformat(query.get("end_date", [first.isoformat()])[0])
            days = [first + datetime.timedelta(n) for n in range((last - first).days + 1)]
            return _json([_apod_day(day) for day in days])
        day = datetime.date.fromisoformat(query.get("date", ["2024-06-01"])[0])
    except ValueError as exc:
        return _json({"code": 400, "msg": f"Bad date: {exc}"}, 400)
    return _json(_apod_day(day))


# --- TheCocktailDB (www.thecocktaildb.com/api/json/v1/1) -------------------------------------------

_DRINKS = (
    ("Negroni", "Ordinary Drink", "Alcoholic", ("Gin", "Campari", "Sweet Vermouth"),
     "Stir the gin, Campari and vermouth with ice, strain into a glass over ice and add an orange peel."),
    ("Mojito", "Cocktail", "Alcoholic", ("Light rum", "Lime", "Sugar", "Mint", "Soda water"),
     "Muddle the mint with sugar and lime juice, add the rum and ice, and top with soda water."),
    ("Daiquiri", "Ordinary Drink", "Alcoholic", ("Light rum", "Lime", "Powdered sugar"),
     "Shake the rum, lime juice and sugar with ice and strain into a chilled cocktail glass."),
    ("Lemonade", "Other / Unknown", "Non alcoholic", ("Lemon", "Sugar", "Water"),
     "Stir the lemon juice and sugar into cold water until the sugar dissolves; serve over ice."),
    ("Old Fashioned", "Cocktail", "Alcoholic", ("Bourbon", "Angostura bitters", "Sugar", "Water"),
     "Stir the sugar with bitters and a dash of water, add the bourbon and ice, garnish with orange."),
)  # fmt: skip


def _drink(index: int) -> dict[str, object]:
    name, category, alcoholic, ingredients, instructions = _DRINKS[index % len(_DRINKS)]
    drink: dict[str, object] = {
        "idDrink": str(11000 + index), "strDrink": name, "strCategory": category, "strAlcoholic": alcoholic,
        "strGlass": "Cocktail glass", "strInstructions": instructions,
    }  # fmt: skip
    for number in range(1, 16):
        drink[f"strIngredient{number}"] = ingredients[number - 1] if number <= len(ingredients) else None
    return drink


def cocktails(path: str, query: dict[str, list[str]]) -> Answer:
    name = path.removeprefix("/api/json/v1/1/")
    if name == "random.php":
        # the same "random" drink every time: reruns of a task (the agent's, the checks') agree
        return _json({"drinks": [_drink(_rng("cocktail").randrange(len(_DRINKS)))]})
    if name == "search.php":
        wanted = query.get("s", [""])[0].lower()
        found = [_drink(i) for i, entry in enumerate(_DRINKS) if wanted in entry[0].lower()]
        return _json({"drinks": found or None})
    if name == "lookup.php" and query.get("i", [""])[0].isdigit():
        index = int(query["i"][0]) - 11000
        return _json({"drinks": [_drink(index)] if 0 <= index < len(_DRINKS) else None})
    return _not_found("www.thecocktaildb.com", path)


# --- wttr.in ------------------------------------------------------------------------------------------

_CONDITIONS = (("Sunny", "☀️"), ("Partly cloudy", "⛅️"), ("Cloudy", "☁️"), ("Light rain", "🌦"))


def _weather(location: str) -> dict[str, str]:
    rng = _rng("wttr", location.lower())
    condition, symbol = rng.choice(_CONDITIONS)
    temperature = rng.randint(12, 33)
    return {
        "l": location, "c": symbol, "C": condition, "t": f"+{temperature}°C", "f": f"+{temperature + 2}°C",
        "h": f"{rng.randint(40, 95)}%", "w": f"↓{rng.randint(2, 30)}km/h", "p": f"{rng.randint(0, 5)}.0mm",
        "P": f"{rng.randint(995, 1025)}hPa", "u": str(rng.randint(0, 11)), "m": "🌓",
    }  # fmt: skip


def wttr(path: str, query: dict[str, list[str]]) -> Answer:
    location = unquote(path.strip("/")).replace("+", " ") or "Hong Kong"
    values = _weather(location)
    form = query.get("format", [""])[0]
    if form == "j1":
        current = {"temp_C": values["t"].strip("+°C"), "humidity": values["h"].rstrip("%"),
                   "weatherDesc": [{"value": values["C"]}], "pressure": values["P"].rstrip("hPa")}  # fmt: skip
        return _json({"current_condition": [current], "nearest_area": [{"areaName": [{"value": location}]}]})
    if form.isdigit() or not form:  # the one-line formats 1-4, and the default report as one line
        form = "%l: %c %t %w" if form != "1" else "%c %t"
    text = form
    for code, value in values.items():
        text = text.replace(f"%{code}", value)
    return _text(text + "\n")


# --- the Bored API (www.boredapi.com/api/activity) ----------------------------------------------------

_ACTIVITIES = (
    ("Learn a new card game", "recreational", 2), ("Write a short story", "education", 1),
    ("Cook a meal from another country", "cooking", 1), ("Go for a walk in a park", "relaxation", 1),
    ("Volunteer at a local food bank", "charity", 1), ("Organize a board game night", "social", 4),
)  # fmt: skip


def bored(path: str, query: dict[str, list[str]]) -> Answer:
    if path.rstrip("/") not in ("/api/activity", "/api/activity/"):
        return _not_found("www.boredapi.com", path)
    rng = _rng("bored", sorted(query.items()))
    activity, kind, participants = rng.choice(_ACTIVITIES)
    return _json({
        "activity": activity, "type": kind, "participants": participants, "price": round(rng.random() * 0.5, 2),
        "link": "", "key": str(rng.randint(1_000_000, 9_999_999)), "accessibility": round(rng.random(), 2),
    })  # fmt: skip


APIS: dict[str, Callable[[str, dict[str, list[str]]], Answer]] = {
    "hacker-news.firebaseio.com": hacker_news,
    "api.nasa.gov": apod,
    "www.thecocktaildb.com": cocktails,
    "thecocktaildb.com": cocktails,
    "wttr.in": wttr,
    "www.boredapi.com": bored,
    "boredapi.com": bored,
}


def answer(host: str, target: str) -> Answer:
    """The stand-in's answer to a GET of `target` (path and query) on `host`."""
    api = APIS.get(host.lower())
    if api is None:
        return _text(f"daharness: no local stand-in for {host} (the sandbox has no internet)\n", 502)
    parts = urlsplit(target)
    return api(parts.path or "/", parse_qs(parts.query))


# --- the proxy -----------------------------------------------------------------------------------------


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    tls: ssl.SSLContext  # set on the class by serve()

    def log_message(self, format: str, *args: object) -> None:
        sys.stderr.write(f"webapis: {self.requestline!r} {args[1] if len(args) > 1 else ''}\n")

    def _reply(self, status: int, content_type: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _serve(self) -> None:
        if self.path.startswith(("http://", "https://")):  # through the proxy: an absolute address
            parts = urlsplit(self.path)
            host, target = parts.hostname or "", parts.path + (f"?{parts.query}" if parts.query else "")
        else:  # inside a tunnel: the Host header names the site
            host, target = (self.headers.get("Host") or "").split(":")[0], self.path
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        self._reply(*answer(host, target))

    do_GET = do_POST = do_HEAD = _serve

    def do_CONNECT(self) -> None:
        host = self.path.rsplit(":", 1)[0].strip("[]")
        if host.lower() not in APIS:
            self._reply(*answer(host, "/"))
            return
        self.send_response(200, "Connection established")
        self.end_headers()
        self.wfile.flush()
        try:
            tunnel = self.tls.wrap_socket(self.connection, server_side=True)
        except (ssl.SSLError, OSError) as exc:
            sys.stderr.write(f"webapis: TLS with the client failed for {host}: {exc}\n")
            self.close_connection = True
            return
        _Handler(tunnel, self.client_address, self.server)  # the tunnel's requests, until it closes
        self.close_connection = True


class _Server(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    allow_reuse_address = True


def serve(certificate: Path, port: int = PORT) -> None:
    """The proxy on 127.0.0.1:`port`; `certificate`: the stand-in hosts' certificate and key (PEM)."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(certificate)
    _Handler.tls = context
    with _Server(("127.0.0.1", port), _Handler) as server:
        print(
            f"webapis: serving on 127.0.0.1:{server.server_address[1]}", flush=True
        )  # port 0: the one chosen
        server.serve_forever()


def main(argv: list[str]) -> int:
    match argv:
        case ["serve", certificate]:
            serve(Path(certificate))
        case ["serve", certificate, port]:
            serve(Path(certificate), int(port))
        case ["hosts"]:
            print("\n".join(sorted(APIS)))
        case _:
            print(__doc__, file=sys.stderr)
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
