"""The viewer's pages by path, served on 127.0.0.1 or written to a folder as static HTML.

Paths: index.html (runs and the sample table), runs/<i>/samples/<id>.html (a sample),
runs/<i>/artifacts/<id>/<file> (a file the agent left, e.g. a figure), runs/<i>/attachments/<id>/<file> (a
file the harness kept for the trajectory: a screenshot sent to the model), runs/<i>/gold/<id>/<file> (a gold
chart of the sample's task, shown beside the agent's). The same relative links work served and exported.
Served, `version` says when a run has new samples: the index page asks for it to show them as they come.
"""

from __future__ import annotations

import mimetypes
import shutil
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

from daharness.core.errors import UserError
from daharness.core.runlog import file_safe
from daharness.report.build import cannot_write
from daharness.view.model import ViewedRun, open_runs, version_of
from daharness.view.pages import index_page, sample_page

HTML = "text/html; charset=utf-8"


class ViewSite:
    def __init__(self, dirs: list[Path]) -> None:
        self.runs = open_runs(dirs)

    def get(self, path: str) -> tuple[str, bytes] | None:
        """(content type, body) of the page or file at `path`, or None."""
        parts = [unquote(part) for part in urlsplit(path).path.strip("/").split("/")]
        for run in self.runs:  # a run still going on has added samples since the last request
            run.refresh()
        if parts in ([""], ["index.html"]):
            return HTML, index_page(self.runs).encode()
        if parts == ["version"]:
            return "text/plain; charset=utf-8", version_of(self.runs).encode()
        if len(parts) < 4 or parts[0] != "runs" or not parts[1].isdigit() or int(parts[1]) >= len(self.runs):
            return None
        run = self.runs[int(parts[1])]
        if parts[2] == "samples" and len(parts) == 4 and parts[3].endswith(".html"):
            record = run.by_page_name(parts[3].removesuffix(".html"))
            return (HTML, sample_page(run, record).encode()) if record else None
        found = None
        if parts[2] in ("artifacts", "attachments") and len(parts) >= 5:
            found = run.saved_file(parts[2], parts[3], "/".join(parts[4:]))
        if parts[2] == "gold" and len(parts) == 5 and (record := run.by_page_name(parts[3])):
            found = run.gold_image(record.id, parts[4])
        if found is not None:
            kind = mimetypes.guess_type(found.name)[0] or "application/octet-stream"
            return kind, found.read_bytes()
        return None

    def export(self, out: Path) -> int:
        """Write every page (and the runs' saved files) under `out`; the number of pages written."""
        if out.exists() and not out.is_dir():
            raise UserError(f"{out}: not a folder")
        if out.exists() and any(out.iterdir()) and not (out / "index.html").is_file():
            raise UserError(f"{out}: folder exists, is not empty and holds no exported view")
        try:
            return self._write(out)
        except OSError as exc:
            raise cannot_write(Path(exc.filename) if exc.filename else out, exc) from None

    def _write(self, out: Path) -> int:
        out.mkdir(parents=True, exist_ok=True)
        (out / "index.html").write_text(index_page(self.runs), encoding="utf-8")
        pages = 1
        for run in self.runs:
            folder = out / "runs" / str(run.index)
            (folder / "samples").mkdir(parents=True, exist_ok=True)
            for record in run.ordered():
                page = folder / "samples" / f"{file_safe(record.key)}.html"
                page.write_text(sample_page(run, record), encoding="utf-8")
                pages += 1
                _copy_gold_images(run, record.id, folder / "gold" / file_safe(record.id))
            for kind in ("artifacts", "attachments"):
                if (run.root / kind).is_dir():
                    # the agent's links are kept in artifacts as links; the export never follows them
                    shutil.copytree(run.root / kind, folder / kind, dirs_exist_ok=True, ignore=_links)
        return pages


def _copy_gold_images(run: ViewedRun, record_id: str, into: Path) -> None:
    task = run.tasks.get(record_id)
    for gold in task.gold.files if task else []:
        if (source := run.gold_image(record_id, gold.name)) is not None:
            into.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, into / gold.name)


def _links(folder: str, names: list[str]) -> list[str]:
    return [name for name in names if Path(folder, name).is_symlink()]


def _handler(site: ViewSite) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            found = site.get(self.path)
            if found is None:
                self.send_error(HTTPStatus.NOT_FOUND)
                return
            kind, body = found
            self.send_response(HTTPStatus.OK)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

    return Handler


def make_server(site: ViewSite, port: int = 0) -> ThreadingHTTPServer:
    """A server for the site on 127.0.0.1 (`port` 0: any free port); call serve_forever on it."""
    try:
        return ThreadingHTTPServer(("127.0.0.1", port), _handler(site))
    except OSError as exc:
        raise UserError(f"--port {port}: {exc.strerror}") from None


__all__ = ["ViewSite", "ViewedRun", "make_server"]
