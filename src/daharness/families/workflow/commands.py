"""What the workflow family adds to the commands: its lines in `daharness doctor`, whether Spider2-V's
applications (Dagster, Airflow, Superset...) can run their tasks here, and why not, and the hosts its cloud
tasks (BigQuery, Snowflake) may reach through the harness's proxy."""

from __future__ import annotations

from rich.markup import escape

from daharness.core.family_commands import DoctorSection


def applications_section() -> DoctorSection:
    from daharness.families.workflow.apps import describe_apps

    found = describe_apps()
    lines = []
    for app, status in found.items():
        if status["available"]:
            places = ", ".join(str(path) for path in status["environments"].values())  # type: ignore[attr-defined]
            lines.append(f"{app}: [green]available[/] ({escape(places)}; {status['database']})")
        else:
            lines.append(f"{app}: [yellow]not available[/]: {escape(str(status['problem']))}")
    return DoctorSection("applications", found, tuple(lines))


def cloud_section() -> DoctorSection:
    from daharness.families.workflow.cloud.applications import describe_cloud

    found = describe_cloud()
    lines = [
        f"{application}: may reach {escape(', '.join(map(str, hosts)) or 'nothing')}"
        for application, hosts in found["applications"].items()  # type: ignore[attr-defined]
    ]
    for provider, status in found["emulators"].items():  # type: ignore[attr-defined]
        state = (
            "[green]available[/]"
            if status["available"]
            else f"[yellow]not available[/]: {escape(str(status['problem']))}"
        )
        lines.append(f"{provider} emulator (--cloud-settings local): {state}")
    return DoctorSection("cloud", found, tuple(lines))
