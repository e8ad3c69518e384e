"""`daharness view`: runs in a browser, served on 127.0.0.1 or written as static pages."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from daharness.cli.app import app
from daharness.cli.options import DebugOption


@app.command()
def view(
    run_dirs: Annotated[
        list[Path], typer.Argument(help="One or more run directories, or run sets' folders (their runs).")
    ],
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port on 127.0.0.1 (0: any free port).")] = 8765,
    export_dir: Annotated[
        Path | None, typer.Option("--export", help="Write static HTML into this folder instead of serving.")
    ] = None,
    debug: DebugOption = False,
) -> None:
    """Look at runs in a browser: figures, a filterable sample table, each sample's whole trajectory."""
    from daharness.cli.options import out
    from daharness.runs.run_set import with_set_runs
    from daharness.view.site import ViewSite, make_server

    site = ViewSite(with_set_runs(run_dirs)[0])
    if export_dir is not None:
        pages = site.export(export_dir)
        out.print(f"wrote {pages} pages to {export_dir} (open {export_dir / 'index.html'})")
        return
    server = make_server(site, port)
    out.print(f"serving http://127.0.0.1:{server.server_address[1]}/ (Ctrl-C stops)")
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
