"""Spider2-V's browser getters that join a check script's output with the browser on the sample's screen:
`validate_correct_url` (superset.py's, the one the official getters register) and `html_check`
(astro.py's), written here from their semantics. Their results are the texts the official getters give,
scored by `check_include_exclude` (include "succeed", exclude "failed").

What each reads, and when (see the workflow family's `finish` and the README):

- `validate_correct_url`: the URL of the tab the browser shows, read on the live screen right after the
  agent (`screen.collect_screen`, getter `active_tab_url`); the task's `eval.sh` runs in the checks'
  environment after the agent's processes are stopped (its output kept with the other check scripts').
- `html_check`: the page must be opened in the browser the agent leaves (logged into the application, as
  officially), so its `eval.sh` runs and the page is checked on the live screen, before the agent's
  processes are stopped (`screen.check_page`). The script then runs beside what the agent left running
  and with its files (an agent could change the URL it prints, e.g. through `~/anaconda3`'s `conda.sh`),
  so it runs again in the checks' environment, and in the corrected mode the page counts only when both
  runs print the same URL.

The modes (`--workflow-mode`): `compat` reproduces the official results; `corrected` fixes
- `validate_correct_url`: an empty element of the output (a script that prints nothing, or an empty id
  between two commas) is in every URL, so it officially "succeeds": an empty script output scored 1.
  Corrected, an empty element fails. And a page that only names another page in its query (a login
  page's `?next=http%3A%2F%2Flocalhost%3A8080%2Fdag-dependencies`, where typing the wanted address without
  logging in lands) officially succeeds too; corrected, query values that are URLs or paths are not
  searched.
- `html_check`: the URL the live run printed must be the one the checks' run prints (above); a selector
  matching several visible elements passes (officially, Playwright's strict locator fails on it).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote_plus, urlsplit, urlunsplit

TAB_URL = "active_tab_url"  # the screen state read for validate_correct_url: the shown tab's url and title
SUCCEED, FAILED = "succeed", "failed"
LINK_FAILED = "Link check failed"
ELEMENTS_SUCCEED = "Checking elements succeed"
ELEMENTS_FAILED = "Checking elements failed"


def address_bar(url: str) -> str:
    """The text Chromium's address bar shows for a page's URL: the URL without its http:// or https://
    scheme (the official getter reads the address bar and puts `goto_prefix` before it)."""
    for scheme in ("https://", "http://"):
        if url.startswith(scheme):
            return url.removeprefix(scheme)
    return url


def without_redirect_targets(url: str) -> str:
    """`url` without the query values that are themselves URLs or paths (a redirect's target: the page
    it names is not the page shown); the rest keeps its encoding."""
    parts = urlsplit(url)
    kept = [
        pair
        for pair in parts.query.split("&")
        if not unquote_plus(pair.partition("=")[2]).startswith(("http://", "https://", "/"))
    ]
    return urlunsplit(parts._replace(query="&".join(kept)))


def validate_correct_url(output: str, tab_url: str, goto_prefix: str, *, corrected: bool) -> str:
    """For each element of the script's output split on ',': "<element> check succeed；" when it is in the
    shown tab's URL (blanks around it stripped, ':' and '+' written %3A and %2B as a URL's query holds
    them), else "<element> check failed；" (the official separator is a fullwidth semicolon)."""
    shown = without_redirect_targets(tab_url) if corrected else tab_url
    active = f"{goto_prefix}{address_bar(shown)}"
    result = ""
    for element in output.split(","):
        wanted = element.strip().replace(":", "%3A").replace("+", "%2B")
        found = wanted in active and (bool(wanted) or not corrected)
        result += f"{element} check {SUCCEED if found else FAILED}；"
    return result


def html_check(live: dict[str, Any] | None, checks_output: str | None, *, corrected: bool) -> str:
    """The official `html_check` result from what `screen.check_page` found on the live screen (`live`)
    and, in the corrected mode, the script's output in the checks' environment."""
    if live is None or live.get("output") is None:
        return LINK_FAILED
    if corrected and (checks_output is None or checks_output.strip() != str(live["output"]).strip()):
        return ELEMENTS_FAILED
    if live.get("error") or len(live.get("selectors", [])) != len(live.get("css_paths", [])):
        return ELEMENTS_FAILED
    for found in live["selectors"]:
        passed = (
            found.get("visible", 0) >= 1 if corrected else found.get("matches") == found.get("visible") == 1
        )
        if not passed or found.get("error"):
            return ELEMENTS_FAILED
    return ELEMENTS_SUCCEED


# ---- superset_localhost_page (superset.py) ------------------------------------------------------------------
# Officially: every page of the browser, once loaded, whose URL (127.0.0.1 read as localhost) starts with the
# config's `url` and whose title holds its `title` (without case) must show Superset's home link (Playwright's
# `expect(locator).to_be_visible()`, strict: exactly one match); the first such page succeeds. Here the
# candidate tabs are found on the live screen right after the agent, and each is loaded again in a new tab of
# the same browser (its session: logged in as the agent left it), where the link is looked for
# (`screen.superset_pages`). Corrected, several visible matches of the link pass too (as for `html_check`).

SUPERSET_PAGE = "superset_localhost_page"
SUPERSET_HOME_LINK = 'a[href="/superset/welcome/"]'
SUPERSET_DEFAULTS = {"url": "http://localhost:8088/superset/welcome", "title": "superset"}
SUPERSET_SUCCEED = "Find superset home page succeed"
SUPERSET_FAILED = "Find superset home page failed"


def superset_candidate(tab: dict[str, Any], url: str, title: str) -> bool:
    """Whether the official getter looks for the home link on this tab."""
    address = str(tab.get("url", "")).replace("127.0.0.1", "localhost")
    return (
        address.startswith(url.replace("127.0.0.1", "localhost"))
        and title.lower() in str(tab.get("title", "")).lower()
    )


def superset_localhost_page(found: dict[str, Any] | None, *, corrected: bool) -> str:
    """The official result text from what `screen.superset_pages` found (None: no screen was read)."""
    for check in (found or {}).get("checks", []):
        selectors = check.get("selectors") or []
        if check.get("error") or len(selectors) != 1 or selectors[0].get("error"):
            continue
        link = selectors[0]
        if link.get("visible", 0) >= 1 if corrected else link.get("matches") == link.get("visible") == 1:
            return SUPERSET_SUCCEED
    return SUPERSET_FAILED
