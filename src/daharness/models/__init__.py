"""Model access for LLM agents: settings, an OpenAI-compatible client with retries, and a reply cache."""

from daharness.models.cache import ResponseCache
from daharness.models.client import (
    Completion,
    ModelClient,
    ModelError,
    ModelFatalError,
    ModelUnavailableError,
    Usage,
)
from daharness.models.settings import ModelSettings, load_model_file, resolve_model

__all__ = [
    "Completion",
    "ModelClient",
    "ModelError",
    "ModelFatalError",
    "ModelSettings",
    "ModelUnavailableError",
    "ResponseCache",
    "Usage",
    "load_model_file",
    "resolve_model",
]
