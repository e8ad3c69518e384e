"""Spider2-V tasks made here whose checks read the desktop's browser: a site served on the sample's loopback
by the setup (a `launch` step, as official tasks start their programs), its index shown in the browser,
and a check script `eval.sh`; and the hostile agent's code that the browser tests replay."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

PORT = 8765
LINKS = ["a[href='https://example.org/a']", "a[href='https://example.org/b']"]
PAGE_OK = (
    '<html><body><a href="https://example.org/a">A</a> <a href="https://example.org/b">B</a></body></html>'
)
ATTACKS = Path(__file__).parent / "fixtures" / "browser_attacks"
WAIT_FOR_PORT = "for i in $(seq 300); do (exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && exit 0; sleep 0.1; done; exit 1"


def write_task(root: Path, task_id: str, result: dict[str, Any], eval_sh: str, **changes: Any) -> Path:
    """A task in the official JSON shape: its `site/` served on localhost:PORT by the setup, its index shown
    in the browser; its check script `eval.sh`."""
    folder = root / "examples" / "chromium" / task_id
    folder.mkdir(parents=True)
    (folder / "index.html").write_text("<html><body><h1>Reports</h1></body></html>")
    (folder / "eval.sh").write_text(f"#!/bin/bash\n{eval_sh}\n")
    official = f"evaluation_examples/examples/chromium/{task_id}"
    raw = {
        "id": task_id, "snapshot": "chromium", "instruction": "see the solution", "related_apps": ["chromium"],
        "tags": ["gui", "abstract"],
        "config": [
            {"type": "copyfile_from_host_to_guest", "parameters": {
                "src": f"{official}/index.html", "dest": "/home/user/site/index.html"}},
            {"type": "launch", "parameters": {"command": [
                "python", "-m", "http.server", str(PORT), "--bind", "127.0.0.1", "--directory", "/home/user/site"]}},
            {"type": "execute", "parameters": {"command": ["bash", "-c", WAIT_FOR_PORT.format(port=PORT)]}},
            {"type": "chrome_open_tabs", "parameters": {"urls_to_open": [f"http://localhost:{PORT}/index.html"]}},
        ],
        "evaluator": {"func": "check_include_exclude", "result": {**result, "src": f"{official}/eval.sh",
                      "dest": "/home/user/eval.sh"},
                      "expected": {"type": "rule", "rules": {"include": ["succeed"], "exclude": ["failed"]}}},
        **changes,
    }  # fmt: skip
    (folder / f"{task_id}.json").write_text(json.dumps(raw))
    return folder


def page_check_task(root: Path, task_id: str = "page") -> Path:
    """The check opens links.html of the site: both links must show."""
    return write_task(
        root, task_id, {"type": "html_check", "css_paths": LINKS, "timeout": 1000},
        f"echo http://localhost:{PORT}/links.html",
    )  # fmt: skip


def background_hijack(port: int) -> str:
    """Bash that starts the DevTools attack (fixtures/browser_attacks) in the background, as an agent's
    code would, and returns once it is armed or has given up."""
    source = (ATTACKS / "devtools_hijack.py").read_text()
    return (
        f"cat > /tmp/hijack.py <<'PYTHON'\n{source}PYTHON\n"
        f"setsid python /tmp/hijack.py {port} /tmp/hijack.status > /tmp/hijack.log 2>&1 < /dev/null &\n"
        "for i in $(seq 600); do [ -s /tmp/hijack.status ] && break; sleep 0.1; done\n"
        "cat /tmp/hijack.status\n"
    )


def serve_in_place_of_the_setup(page: str) -> str:
    """Bash that stops the setup's web server on PORT and serves its own `links.html` there instead."""
    return (
        "python - <<'PYTHON'\n"
        "import os, signal\n"
        "for pid in filter(str.isdigit, os.listdir('/proc')):\n"
        "    try:\n"
        "        line = open(f'/proc/{pid}/cmdline', 'rb').read().split(b'\\0')\n"
        "    except OSError:\n"
        "        continue\n"
        f"    if b'http.server' in line and b'{PORT}' in line and b'/home/user/site' in line:\n"
        "        os.kill(int(pid), signal.SIGKILL)\n"
        "PYTHON\n"
        f"mkdir -p /tmp/fake && cat > /tmp/fake/links.html <<'HTML'\n{page}\nHTML\n"
        f"for i in $(seq 100); do\n"
        f"  setsid python -m http.server {PORT} --bind 127.0.0.1 --directory /tmp/fake > /tmp/fake.log 2>&1 < /dev/null &\n"
        f"  sleep 0.3; (exec 3<>/dev/tcp/127.0.0.1/{PORT}) 2>/dev/null && break\n"
        "done\n"
        f"python -c \"import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:{PORT}/links.html').read().decode())\"\n"
    )
