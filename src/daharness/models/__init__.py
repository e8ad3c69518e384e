"""Model access for LLM agents: settings, an OpenAI-compatible client with retries, and a reply cache."""

from daharness.models.cache import ResponseCache
from daharness.models.client import (
    Completion,
    ModelClient,
    ModelError,
    ModelFatalError,
    ModelUnavailableError,
    Usage,
    requests_of_epoch,
)
from daharness.models.preflight import RunModels
from daharness.models.settings import ModelSettings, load_model_file, resolve_model

__all__ = [
    "Completion",
    "ModelClient",
    "ModelError",
    "ModelFatalError",
    "ModelSettings",
    "ModelUnavailableError",
    "ResponseCache",
    "RunModels",
    "Usage",
    "load_model_file",
    "requests_of_epoch",
    "resolve_model",
]
