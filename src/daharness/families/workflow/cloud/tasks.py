"""What the `spider2v` loader makes of a cloud task's setup steps and getters, given the accounts chosen with
`--cloud-settings` (a settings folder, or `local` for the harness's emulators), and why a task cannot run
with them.

A task runs when every step and getter it has is done here with those accounts:
- `bigquery_init` / `snowflake_init`: on the host, with the providers' client libraries (`setup.py`);
- `bigquery_login` / `snowflake_login` open the provider's web console in the desktop's browser,
  officially the agent's way to the account. With a real account and no desktop it does nothing, like the
  release's other browser steps here: the task runs when its setup gives the agent another way (a key
  file copied to the desktop), else it is refused; the console's sign-in on a desktop is not done by
  daharness yet (Google's and Snowflake's sign-in pages cannot be reached from this project's machines to
  test it). An emulator has no console: its API stands in for it, and the agent is given the emulator's
  own credentials (not a secret: `access.py`);
- getters that ask the API (`getters.py`) run after the agent; getters and steps that read or drive the
  console (worksheets, folders, filters, a URL) need the console;
- an emulator lacks what only the provider has (public datasets, the marketplace, S3, time travel...):
  tasks that need it are refused on the emulators with what they need.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from daharness.families.workflow.cloud import emulators
from daharness.families.workflow.cloud.getters import GETTERS, PROVIDER_OF
from daharness.families.workflow.cloud.settings import CloudSettings, load_settings

SETUP_STEPS = {"bigquery_init": "bigquery", "snowflake_init": "snowflake"}
LOGIN_STEPS = {"bigquery_login": "bigquery", "snowflake_login": "snowflake"}
CONSOLE_STEPS = {
    "snowflake_write_sqls_in_new_worksheet": "writes SQL in a new worksheet of Snowsight",
    "snowflake_delete_folder": "deletes a folder of worksheets in Snowsight",
    "snowflake_delete_filter": "deletes a worksheet filter in Snowsight",
}
CONSOLE_GETTERS = {
    "snowflake_worksheet_sql": "reads the SQL of the worksheet open in Snowsight",
    "snowflake_worksheet_sql_result": "runs the SQL of a worksheet open in Snowsight",
    "snowflake_worksheet_names_in_folder": "lists the worksheets of a Snowsight folder",
    "active_url_from_accessTree": "reads the web console's URL in the browser",
}
ACCOUNT_STEPS = {
    "googledrive_init": "needs a Google Drive account (googledrive_init), which daharness does not set up",
    "googledrive_login": "needs a Google Drive account (googledrive_login), which daharness does not set up",
    "hasura_login": "needs a Hasura Cloud account (hasura_login), which daharness does not set up",
}
STEP_KINDS = frozenset({*SETUP_STEPS, *LOGIN_STEPS, *CONSOLE_STEPS})
GETTER_KINDS = frozenset({*GETTERS, *CONSOLE_GETTERS})
NAMES = {"bigquery": "BigQuery", "snowflake": "Snowflake"}
# what an emulated provider lacks, found in a task's instruction, tutorial or files
EMULATOR_GAPS: dict[str, tuple[tuple[re.Pattern[str], str], ...]] = {
    "bigquery": (
        (re.compile(r"bigquery-public-data|patents-public-data|public dataset", re.I),
         "reads BigQuery's public datasets, which the emulator does not have"),
        (re.compile(r"gs://|Cloud Storage", re.I), "loads from Google Cloud Storage, which is not emulated"),
        (re.compile(r"google ?sheet|Google Drive", re.I), "reads a Google Sheet on Google Drive, which is not available here"),
        (re.compile(r"CREATE\s+(OR\s+REPLACE\s+)?MODEL|BigQuery ML|Vertex AI", re.I),
         "uses BigQuery ML or Vertex AI, which bqemulator does not serve"),
    ),
    "snowflake": (
        (re.compile(r"s3://|S3 bucket", re.I), "loads from Amazon S3, which is not emulated"),
        (re.compile(r"marketplace", re.I), "gets data from the Snowflake Marketplace, which is not emulated"),
        (re.compile(r"SNOWFLAKE_SAMPLE_DATA", re.I), "reads SNOWFLAKE_SAMPLE_DATA, which fakesnow does not have"),
        (re.compile(r"\bUNDROP\b|time travel|query history", re.I),
         "needs time travel or the query history (UNDROP), which fakesnow does not emulate"),
        (re.compile(r"python worksheet", re.I), "writes a Python worksheet in Snowsight"),
        (re.compile(r"event table", re.I), "needs event tables (ALTER ACCOUNT SET EVENT_TABLE), which fakesnow does not emulate"),
        (re.compile(r"CREATE\s+USER|new user", re.I), "manages users and grants, which fakesnow does not emulate"),
    ),
}  # fmt: skip
_GETTER_GAPS = {
    "bigquery_connections": "lists the project's external connections, which bqemulator does not serve"
}


class CloudUnsupported(Exception):
    """The task cannot run with the chosen accounts; the message says why."""


@dataclass(frozen=True)
class CloudAccounts:
    """The accounts a suite was loaded with: `spec` is a settings folder or `local`."""

    spec: str
    settings: CloudSettings | None = None  # None for `local` (the emulators start with the first sample)

    @classmethod
    def chosen(cls, value: Any) -> CloudAccounts | None:
        if value is None:
            return None
        if str(value) == emulators.LOCAL:
            return cls(emulators.LOCAL)
        folder = Path(str(value)).expanduser().resolve()
        return cls(str(folder), load_settings(folder))

    def emulated(self, provider: str) -> bool:
        if self.settings is None:
            return True
        return self.settings.bigquery_emulated if provider == "bigquery" else self.settings.snowflake_emulated

    def problem(self, provider: str) -> str | None:
        """Why the provider cannot be used with these accounts, or None."""
        if self.settings is None:
            return emulators.missing(provider)
        if provider == "bigquery" and not self.settings.projects:
            return f"needs a BigQuery project: {self.settings.folder}/google/gcp_config.json is missing"
        if provider == "snowflake" and self.settings.snowflake is None:
            return f"needs a Snowflake account: {self.settings.folder}/snowflake/settings.json is missing"
        module = "google.cloud.bigquery" if provider == "bigquery" else "snowflake.connector"
        import importlib.util

        if importlib.util.find_spec(module) is None:
            return f"needs the {NAMES[provider]} client library: pip install 'daharness[cloud]'"
        return None


@dataclass
class CloudNeeds:
    """What one task's reading found: the providers, the applications its sandbox may reach, the
    agent's ways to the accounts, the getters to run after the agent."""

    providers: set[str] = field(default_factory=set)
    applications: set[str] = field(default_factory=set)
    logins: set[str] = field(default_factory=set)  # providers whose console is the agent's way in
    keyfiles: set[str] = field(default_factory=set)  # providers whose setup copies a key to the desktop
    getters: dict[str, dict[str, Any]] = field(default_factory=dict)
    steps: list[dict[str, Any]] = field(default_factory=list)  # bigquery_init / snowflake_init, in order

    def as_data(self, accounts: CloudAccounts) -> dict[str, Any]:
        return {
            "settings": accounts.spec, "providers": sorted(self.providers),
            "applications": sorted(self.applications), "getters": self.getters, "steps": self.steps,
            "emulated": sorted(p for p in self.providers if accounts.emulated(p)),
            "logins": sorted(self.logins),
        }  # fmt: skip


def no_accounts_reason(kind: str) -> str:
    provider = SETUP_STEPS.get(kind) or LOGIN_STEPS.get(kind) or PROVIDER_OF.get(kind) or kind.split("_")[0]
    name = NAMES.get(provider, provider)
    return (
        f"needs a {name} account: give --cloud-settings DIR (Spider2-V's settings layout) or "
        f"--cloud-settings local (the local emulators), step or getter '{kind}'"
    )


def read_step(
    accounts: CloudAccounts | None, needs: CloudNeeds, kind: str, params: dict[str, Any], resolve: Any
) -> dict[str, Any] | None:
    """A cloud setup step as the args of a `cloud` SetupStep (None: a login, done by the family through
    the task's data); `resolve` finds a file named in the task."""
    if kind in CONSOLE_STEPS:
        raise CloudUnsupported(
            f"{CONSOLE_STEPS[kind]} ({kind}): the console's automation is not done by daharness"
        )
    if accounts is None:
        raise CloudUnsupported(no_accounts_reason(kind))
    provider = SETUP_STEPS.get(kind) or LOGIN_STEPS[kind]
    _use(accounts, needs, provider)
    if kind in LOGIN_STEPS:
        needs.logins.add(provider)
        return None
    actions = []
    for raw in params.get("actions", []):
        action = dict(raw)
        if action.get("type") == "copy_keyfile":
            needs.keyfiles.add(provider)
        if isinstance(action.get("data_from_csv"), str):
            if action["data_from_csv"].startswith("http"):
                raise CloudUnsupported(f"{kind} downloads {action['data_from_csv']} from the internet")
            action["data_from_csv"] = str(resolve(action["data_from_csv"]))
        if isinstance(action.get("sql_script"), str):
            script = resolve(action["sql_script"])
            action["sql_script"] = str(script)
            action["put_files"] = _put_files(script.read_text(encoding="utf-8", errors="replace"), resolve)
        actions.append(action)
    return {"cloud": kind, "parameters": {**params, "actions": actions}}


def _put_files(script: str, resolve: Any) -> dict[str, str]:
    """The files a script's PUT statements upload (release paths) and where they are on the host."""
    return {path: str(resolve(path)) for path in re.findall(r"PUT\s+'?file://([^\s']+)", script, re.I)}


def read_getter(
    accounts: CloudAccounts | None, needs: CloudNeeds, kind: str, raw: dict[str, Any], resolve: Any
) -> dict[str, Any]:
    """A cloud getter as the scorers' source (its result is kept in the evidence under `path`)."""
    if kind in CONSOLE_GETTERS:
        raise CloudUnsupported(
            f"evaluator {CONSOLE_GETTERS[kind]} ({kind}): needs the web console, which daharness does not drive"
        )
    if accounts is None:
        raise CloudUnsupported(no_accounts_reason(kind))
    provider = PROVIDER_OF[kind]
    _use(accounts, needs, provider)
    if accounts.emulated(provider) and kind in _GETTER_GAPS:
        raise CloudUnsupported(f"evaluator {_GETTER_GAPS[kind]} ({kind})")
    config = {key: value for key, value in raw.items() if key not in ("settings_file", "config_file")}
    for key in ("sql", "sql_script"):
        if isinstance(config.get(key), str):
            config[key] = str(resolve(config[key]))
    key = f"{len(needs.getters)}:{kind}"
    needs.getters[key] = config
    return {"kind": "cloud", "path": key}


def _use(accounts: CloudAccounts, needs: CloudNeeds, provider: str) -> None:
    if problem := accounts.problem(provider):
        raise CloudUnsupported(problem)
    needs.providers.add(provider)
    needs.applications.add(provider)


def check_task(
    accounts: CloudAccounts, needs: CloudNeeds, files: list[Path], instruction: str, desktop: bool
) -> None:
    """What the task as a whole needs of the accounts: the agent's way in, and what an emulator lacks
    (`files`: the task folder's files, each held inside the suite's folder by the loader)."""
    for provider in sorted(needs.logins):
        if accounts.emulated(provider):
            continue  # the emulator's API and credentials stand in for its console
        if provider not in needs.keyfiles:
            why = "needs a desktop" if not desktop else "is not done by daharness yet"
            raise CloudUnsupported(
                f"the agent's only way to {NAMES[provider]} is its web console, signed in on the desktop's "
                f"browser ({provider}_login), which {why}"
            )
    texts = [instruction, *(p.read_text(encoding="utf-8", errors="replace") for p in _task_texts(files))]
    for provider in sorted(needs.providers):
        if not accounts.emulated(provider):
            continue
        for pattern, reason in EMULATOR_GAPS[provider]:
            if any(pattern.search(text) for text in texts):
                raise CloudUnsupported(f"on the {NAMES[provider]} emulator: the task {reason}")


TEXT_SUFFIXES = (".txt", ".sql", ".py", ".sh", ".md")  # files whose text may ask what an emulator lacks


def _task_texts(files: list[Path]) -> list[Path]:
    return [
        path for path in files
        if path.suffix in TEXT_SUFFIXES and not path.name.startswith("retrieved_chunk")
    ]  # fmt: skip


def instruction_note(accounts: CloudAccounts, needs: CloudNeeds) -> str:
    """What the agent is told of its way to an emulated provider (which has no console)."""
    lines = []
    for provider in sorted(needs.providers):
        if accounts.emulated(provider) and provider in needs.logins and provider not in needs.keyfiles:
            lines.append(
                "BigQuery has no web console here: use its API. `bigquery.Client()` of google-cloud-bigquery "
                "finds the project's credentials and endpoint in the environment."
                if provider == "bigquery"
                else "Snowflake has no web console here: use its API. `snowflake.connector.connect"
                '(connection_name="default")` connects to the account.'
            )
    return "\n".join(lines)
