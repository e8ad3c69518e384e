"""How to reach one model: endpoint, key, sampling, limits and prices; named models from a TOML file."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from daharness.core.errors import UserError, located, plain_message


class ModelSettings(BaseModel):
    # built when a model is named: a run of the reference agent has none
    model_config = ConfigDict(extra="forbid", protected_namespaces=(), defer_build=True)

    model: str = Field(min_length=1, description="Model id sent to the API (the deployment name on Azure).")
    base_url: str | None = Field(default=None, description="None: the SDK default (OpenAI).")
    api_key_env: str = Field(
        default="OPENAI_API_KEY", description="Env var holding the key; unset is fine for local servers."
    )
    api_version: str | None = Field(default=None, description="Set: an Azure endpoint at base_url.")
    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = Field(default=None, gt=0)
    stop: list[str] | None = None
    seed: int | None = None
    timeout_s: float = Field(
        default=120.0, gt=0, description="Total deadline of one attempt: connecting and the whole reply."
    )
    max_retries: int = Field(default=5, ge=0, description="Retries of one call after its first attempt.")
    max_run_retries: int = Field(
        default=100, ge=0, description="Retries of all calls of a run together; then calls fail at once."
    )
    max_concurrency: int | None = Field(
        default=None,
        ge=1,
        description="Requests in flight for this model, process-wide (a provider's rate limit); unset, as many "
        "as the run has samples in flight (-j).",
    )
    input_price_per_mtok: float = Field(default=0.0, ge=0, description="USD per million prompt tokens.")
    output_price_per_mtok: float = Field(default=0.0, ge=0, description="USD per million completion tokens.")

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        # the SDK takes any string and fails at each request, which the run would retry as an outage
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError(f"{value!r} is not an http:// or https:// URL (e.g. http://localhost:8000/v1)")
        return value

    def missing_key(self) -> str | None:
        """Why no request can succeed for want of a key, checked before the first sample: the key's
        variable is unset or empty where a key is needed (the default OpenAI endpoint, Azure, or a variable
        named on purpose). A local server given by its URL alone needs none."""
        env = self.api_key_env
        if os.environ.get(env):
            return None
        if self.base_url is None:
            return (
                f"model {self.model!r}: ${env} is not set, and the OpenAI API needs a key (set it, or give "
                "--base-url for a server that needs none)"
            )
        if self.api_version or "api_key_env" in self.model_fields_set:
            return f"model {self.model!r}: ${env} is not set (named as the variable of the API key)"
        return None


def _describe(exc: ValidationError, prefix: str) -> str:
    """One line naming every bad field, e.g. `models.gpt4o.temprature: unknown field`."""
    parts = []
    for error in exc.errors():
        field = ".".join(str(part) for part in error["loc"])
        message = "unknown field" if error["type"] == "extra_forbidden" else plain_message(error)
        parts.append(f"{prefix}{field}: {message}")
    return "; ".join(parts)


def load_model_file(path: Path) -> dict[str, ModelSettings]:
    """Named models of a TOML file, one `[models.NAME]` table each."""
    import tomllib  # read for a models file only

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise located(path, f"cannot read the models file: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise located(path, f"invalid TOML: {exc}") from None
    unknown = sorted(set(data) - {"models"})
    if unknown:
        raise located(path, f"unknown key {unknown[0]!r}: named models go in [models.NAME] tables")
    tables = data.get("models")
    if not isinstance(tables, dict) or not tables:
        raise located(path, "no [models.NAME] table")
    models = {}
    for name, table in tables.items():
        if not isinstance(table, dict):
            raise located(path, f"models.{name}: expected a table, got {type(table).__name__}")
        try:
            models[name] = ModelSettings.model_validate(table)
        except ValidationError as exc:
            raise located(path, _describe(exc, f"models.{name}.")) from None
    return models


def resolve_model(
    name: str,
    *,
    config_file: Path | None,
    base_url: str | None,
    api_key_env: str | None,
    overrides: dict[str, Any],
) -> ModelSettings:
    """The settings of `name`: its entry in the models file, or without a file a plain model id; options
    that are not None (from the command line) win over the file. A name the file does not have is
    refused: taken as a model id, it would go to the OpenAI API (or the given URL) unannounced."""
    given = {"base_url": base_url, "api_key_env": api_key_env, **overrides}
    given = {key: value for key, value in given.items() if value is not None}
    if config_file is None:
        base = {"model": name}
    else:
        named = load_model_file(config_file)
        if name not in named:
            raise located(config_file, f"no model named {name!r} (it names {', '.join(sorted(named))})")
        base = named[name].model_dump(exclude_unset=True)
    try:
        return ModelSettings.model_validate({**base, **given})
    except ValidationError as exc:
        # only command-line values can be wrong here: the file's entry was valid on its own
        first = exc.errors()[0]
        option = "--" + str(first["loc"][0]).replace("_", "-") if first["loc"] else "--model"
        message = "unknown option" if first["type"] == "extra_forbidden" else plain_message(first)
        raise UserError(f"{option}: {message}") from None
