"""The user's cloud accounts, in the layout the Spider2-V release asks for (`evaluation_examples/settings/`):

    google/gcp_config.json     [{"project_name", "project_id", "keyfile_path", ...}]  (a service account's key)
    google/settings.json       {"email", "password"}                                  (the console's login)
    snowflake/settings.json    {"account", "user", "password"}

read on the host only: nothing of it enters a sandbox, but what a task's own setup puts there (a key file
copied to the desktop, a logged-in browser). Two additions of daharness point the providers' own client
libraries at local emulators: a project's `api_endpoint` (BigQuery's REST root, as the client's
`client_options` take it) and Snowflake's `host`, `port` and `protocol` (as `snowflake.connector.connect`
takes them; the release passes its settings to it whole). A provider with such an endpoint is *emulated*:
only its API is there, no web console.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, ValidationError

from daharness.core.errors import UserError, first_problem

GCP_CONFIG = "google/gcp_config.json"
GOOGLE_LOGIN = "google/settings.json"
SNOWFLAKE = "snowflake/settings.json"
_ACCOUNT_URL = re.compile(r"https://(.*?)\.snowflakecomputing\.com")


class GoogleProject(BaseModel):
    model_config = ConfigDict(extra="allow")

    project_name: str
    project_id: str
    keyfile_path: str
    api_endpoint: str | None = None  # daharness: an emulator's REST root (http://127.0.0.1:9050)


class GoogleLogin(BaseModel):
    model_config = ConfigDict(extra="allow")

    email: str
    password: str


class SnowflakeAccount(BaseModel):
    """What `snowflake.connector.connect` is given, as the release does (`host`/`port`/`protocol`: an
    emulator)."""

    model_config = ConfigDict(extra="allow")

    account: str
    user: str
    password: str
    host: str | None = None
    port: int | None = None
    protocol: str | None = None

    @property
    def account_name(self) -> str:
        """The account identifier, as the release takes it from a console URL."""
        matched = _ACCOUNT_URL.search(self.account)
        return matched.group(1) if matched else self.account

    def connect_arguments(self) -> dict[str, Any]:
        return {**self.model_dump(exclude_none=True), "account": self.account_name}


class CloudSettings(BaseModel):
    """The accounts found in a settings folder; a provider without its file is absent."""

    model_config = ConfigDict(frozen=True)

    folder: Path
    projects: tuple[GoogleProject, ...] = ()
    google_login: GoogleLogin | None = None
    snowflake: SnowflakeAccount | None = None

    def project(self, name: str | None = None, index: int | None = None) -> GoogleProject:
        """A project by its `project_name`, or by its index in gcp_config.json (the release's two ways)."""
        if name is not None:
            for project in self.projects:
                if project.project_name == name:
                    return project
            raise KeyError(f"no project named {name!r} in {self.folder / GCP_CONFIG}")
        if index is not None and 0 <= index < len(self.projects):
            return self.projects[index]
        raise KeyError(f"no project {index!r} in {self.folder / GCP_CONFIG}")

    def keyfile(self, project: GoogleProject) -> Path:
        """The project's key file: as written when it exists, else by its name beside gcp_config.json (the
        release writes paths relative to its repository)."""
        written = Path(project.keyfile_path)
        if written.is_absolute() and written.is_file():
            return written
        beside = self.folder / "google" / written.name
        return beside if beside.is_file() else written

    @property
    def bigquery_emulated(self) -> bool:
        return any(project.api_endpoint for project in self.projects)

    @property
    def snowflake_emulated(self) -> bool:
        return self.snowflake is not None and self.snowflake.host is not None


def load_settings(folder: Path) -> CloudSettings:
    """The settings in `folder`; a malformed file is a one-line error naming it and the field."""
    if not folder.is_dir():
        raise UserError(f"{folder}: --cloud-settings must be a folder in the layout of Spider2-V's settings")
    projects = _read(folder / GCP_CONFIG, list[GoogleProject]) or []
    login = _read(folder / GOOGLE_LOGIN, GoogleLogin)
    snowflake = _read(folder / SNOWFLAKE, SnowflakeAccount)
    if not projects and snowflake is None:
        raise UserError(f"{folder}: neither {GCP_CONFIG} nor {SNOWFLAKE} is there")
    return CloudSettings(folder=folder, projects=tuple(projects), google_login=login, snowflake=snowflake)


def _read(path: Path, model: Any) -> Any:
    from pydantic import TypeAdapter

    if not path.is_file():
        return None
    try:
        raw = json.loads(_without_comments(path.read_text(encoding="utf-8")))
        return TypeAdapter(model).validate_python(raw)
    except ValueError as exc:
        if isinstance(exc, ValidationError):
            raise UserError(f"{path}: {first_problem(exc)}") from None
        raise UserError(f"{path}: not JSON ({exc})") from None


def _without_comments(text: str) -> str:
    """The release's templates carry `// ...` notes after values; a user's copy may keep them."""
    return "\n".join(
        re.sub(r'^((?:[^"/]|"(?:[^"\\]|\\.)*")*)//.*$', r"\1", line) for line in text.splitlines()
    )


def endpoint_address(url: str) -> tuple[str, int]:
    """host and port of an endpoint URL (http://127.0.0.1:9050 -> ("127.0.0.1", 9050))."""
    parts = urlsplit(url if "//" in url else f"http://{url}")
    return parts.hostname or "127.0.0.1", parts.port or (443 if parts.scheme == "https" else 80)
