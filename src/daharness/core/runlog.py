"""The versioned run log: what `run.json`, `trajectories/<id>.json` and `report.json` hold.

`samples.jsonl` holds one `SampleRecord` per line (see `record.py`). Every file carries
`format_version`; files written before versions existed (daharness 0.1) are read as version 1 and
upgraded in memory, so old runs still open, resume, report and compare.

Versions: 2 named the scoring modes by group (`scoring.modes`); 3 spells families and mode groups as
users see them (`closed-form`, no longer `closed_form`; the runs layer reads older names under the new
ones: `FamilyBase.former_names`, `ModeGroup.former_names`) and gives report.json the figures' tables
(`family_tables`).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from daharness.core.submission import Event

FORMAT_VERSION = 3
# run.json keys that must match for a re-run to resume rather than mix two different runs.
IDENTITY_KEYS = ("suite", "agent", "scoring", "epochs", "sample_shuffle")


def _known_version(version: int) -> int:
    """A file from a newer daharness may mean something else by its fields: refuse it rather than guess."""
    if version > FORMAT_VERSION:
        raise ValueError(
            f"written by a newer daharness (format {version}); this one reads formats up to {FORMAT_VERSION}"
        )
    return version


class ScoringSettings(BaseModel):
    """The run-level scoring choice: a mode per mode group (e.g. closed-form -> strict)."""

    model_config = ConfigDict(extra="forbid")

    modes: dict[str, str] = Field(default_factory=dict)

    def mode(self, group: str, default: str) -> str:
        return self.modes.get(group, default)


class RunSpec(BaseModel):
    """`run.json`: everything needed to know what a run did and to resume it."""

    model_config = ConfigDict(extra="allow")

    format_version: int = FORMAT_VERSION
    daharness_version: str = "unknown"
    created_at: str | None = None
    suite: dict[str, Any]
    suite_spec: dict[str, Any] = Field(
        default_factory=dict,
        description="How to load the suite again: {'spec': NAME_OR_PREFIX_PATH, 'options': {...}}.",
    )
    agent: dict[str, Any]
    scoring: ScoringSettings = Field(default_factory=ScoringSettings)
    sandbox: dict[str, Any] = Field(default_factory=dict)
    concurrency: int = 1
    python: str | None = None
    platform: str | None = None
    packages: dict[str, str | None] = Field(default_factory=dict)
    command: list[str] = Field(default_factory=list)
    epochs: int = Field(default=1, ge=1, description="Times each task is run (run --epochs).")
    tags: list[str] = Field(default_factory=list, description="The user's labels of the run (run --tag).")
    metadata: dict[str, str] = Field(default_factory=dict, description="The user's notes (run --meta k=v).")
    sample_shuffle: int | None = Field(
        default=None,
        description="The seed that ordered the suite's tasks before --limit (run --sample-shuffle); a resume "
        "keeps it (another seed is another run).",
    )
    left_out: dict[str, str] = Field(
        default_factory=dict,
        description="Tasks of the suite that could not run where the run was made, with why (the report's "
        "task set names them).",
    )

    _check_version = field_validator("format_version")(_known_version)

    @classmethod
    def from_json_dict(cls, raw: dict[str, Any]) -> RunSpec:
        """Read any version of run.json (version 1 named its modes `closed_form_mode`/`workspace_mode`)."""
        raw = dict(raw)
        scoring = raw.get("scoring") or {}
        if isinstance(scoring, dict) and "modes" not in scoring:  # anything else: validation names it
            legacy = {"closed_form_mode": "closed_form", "workspace_mode": "workspace"}
            raw["scoring"] = {
                "modes": {group: scoring[key] for key, group in legacy.items() if key in scoring}
            }
        raw.setdefault("format_version", 1)
        return cls.model_validate(raw)

    def identity(self) -> dict[str, Any]:
        dumped = self.model_dump(mode="json")
        return {key: dumped[key] for key in IDENTITY_KEYS}

    def conflicts_with(self, wanted: RunSpec) -> str | None:
        """Why a run recorded as `self` cannot be resumed by a command that makes `wanted`, or None.

        Suite (its version included), agent and scoring must be equal, and so must the sandbox's backend
        and limits: samples resumed under other limits (more memory, a longer timeout), or of a suite whose
        data or scoring has changed since, would be scored under other conditions than the run records.
        A suite version, limits or agent settings that a run made by an older daharness did not record are
        not compared: an agent records every option its model has (None included), so a key its block
        lacks is one that daharness did not record then (runs made before agents declared their options
        name them, if at all, in their own words, such as the replay's `source`, which are compared)."""
        existing, new = self.identity(), wanted.identity()
        if "version" not in existing["suite"]:
            new["suite"] = {key: value for key, value in new["suite"].items() if key != "version"}
        new["agent"] = {key: value for key, value in new["agent"].items() if key in existing["agent"]}
        for key in IDENTITY_KEYS:
            if existing[key] != new[key]:
                return _first_difference(key, existing[key], new[key])
        old_backend, new_backend = self.sandbox.get("backend"), wanted.sandbox.get("backend")
        if old_backend is not None and old_backend != new_backend:
            return f"sandbox backend = {old_backend!r}, now {new_backend!r}"
        old_limits, new_limits = self.sandbox.get("limits") or {}, wanted.sandbox.get("limits") or {}
        for name in sorted(old_limits.keys() & new_limits.keys()):
            if old_limits[name] != new_limits[name]:
                return f"sandbox limit {name} = {old_limits[name]!r}, now {new_limits[name]!r}"
        return None


def _first_difference(where: str, old: Any, new: Any) -> str:
    """The first value that differs, by its dotted name (`scoring.modes.closed-form: 'strict', now
    'normalized'`), rather than two whole dictionaries."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(old.keys() | new.keys(), key=str):
            if old.get(key) != new.get(key):
                return _first_difference(f"{where}.{key}", old.get(key), new.get(key))
    return f"{where}: {_short(old)}, now {_short(new)}"


def _short(value: Any) -> str:
    text = "not set" if value is None else repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


class TrajectoryFile(BaseModel):
    """`trajectories/<id>.json`: the last attempt's events and final answer."""

    model_config = ConfigDict(extra="allow")

    format_version: int = FORMAT_VERSION
    id: str
    agent: str
    attempt: int = 1
    answer: str | None = None
    answers: list[str | None] = Field(default_factory=list)
    finished: bool = True
    stop_reason: str | None = None
    steps: list[Event] = Field(default_factory=list)

    _check_version = field_validator("format_version")(_known_version)


def file_safe(sample_id: str) -> str:
    """A sample id as a file name (trajectories/<id>.json, artifacts/<id>/)."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in sample_id)
