"""`daharness doctor`: which isolation and limits this machine gives agent code, and whether samples can
have a desktop."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from daharness.cli.app import app
from daharness.cli.options import DebugOption
from daharness.core.errors import UserError


@app.command()
def doctor(
    sandbox: Annotated[str, typer.Option(help="The sandbox backend to examine.")] = "bwrap",
    json_output: Annotated[bool, typer.Option("--json", help="Print the findings as JSON.")] = False,
    debug: DebugOption = False,
) -> None:
    """Say which isolation and limits this machine gives agent code, and whether samples can have a
    desktop (exit 1 if the sandbox cannot run)."""
    import json

    from daharness.cli.families import ordered_families
    from daharness.cli.options import out
    from daharness.core.limits import Limits
    from daharness.core.registry import backends
    from daharness.report.terminal import print_isolation
    from daharness.sandbox import cgroups, describe_desktop, describe_isolation, probe_cache
    from daharness.sandbox.scratch import reap_stale

    if sandbox not in backends:
        raise UserError(f"--sandbox: no backend {sandbox!r} (known: {', '.join(backends)})")
    probe_cache.forget()  # the doctor probes bubblewrap afresh, whatever an earlier command found
    reaped = reap_stale()
    cgroups.remove_stale()
    report = describe_isolation(sandbox, Limits())
    report["desktop"] = describe_desktop(sandbox)
    report["stale_folders_removed"] = [str(path) for path in reaped]
    sections = [section for family in ordered_families() for section in family.doctor()]  # e.g. applications
    if json_output:
        findings = {**report, **{section.name: section.findings for section in sections}}
        sys.stdout.write(json.dumps(findings, indent=2) + "\n")
    else:
        print_isolation(out, report)
        for line in (line for section in sections for line in section.lines):
            out.print(line)
    if report.get("works") is False:
        raise typer.Exit(1)
