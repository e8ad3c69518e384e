"""Registries by name: scorers, agents, suite formats, sandbox backends and families.

Each built-in piece registers itself with a decorator in its own module; `discover()` imports the
built-in packages (the shared sandbox backends, agents and executors, and `daharness.families`, whose
one list imports every family) and then every module that third-party packages list under the
entry-point group `daharness.plugins`, so a new piece is one new file with one decorator:

    @scorer("exact", options=ExactOptions)
    def exact(context: ScoringContext, options: ExactOptions) -> Score: ...

Lookups discover first, so callers never need to import the modules that register.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from daharness.core.agent import AgentOptions, NoAgentOptions
from daharness.core.errors import UserError, plain_message
from daharness.core.options import option_name, parse_options
from daharness.core.scoring import ModeGroup, NoOptions, ScorerOptions

ENTRY_POINT_GROUP = "daharness.plugins"
BUILTIN_PLUGINS = (
    "daharness.sandbox.backends",
    "daharness.agents",
    "daharness.families",
    "daharness.runs.executors",
    "daharness.runs.ray_executor",  # ray itself is imported only when the executor is used
)
T = TypeVar("T")
_discovery_lock = threading.RLock()
_discovered = False


def discover() -> None:
    """Import every module that registers something (built-in first, then entry points), once."""
    global _discovered
    with _discovery_lock:
        if _discovered:
            return
        _discovered = True
        for module in BUILTIN_PLUGINS:
            importlib.import_module(module)
        for point in entry_points(group=ENTRY_POINT_GROUP):
            try:
                point.load()
            except Exception as exc:  # a broken plugin must say which one it is
                raise UserError(f"plugin {point.name} ({point.value}) failed to load: {exc}") from exc


class Registry(Generic[T]):
    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, T] = {}

    def add(self, name: str, entry: T) -> None:
        if name in self._entries:
            raise ValueError(f"{self.kind} {name!r} is registered twice")
        self._entries[name] = entry

    def get(self, name: str) -> T:
        discover()
        try:
            return self._entries[name]
        except KeyError:
            known = ", ".join(sorted(self._entries)) or "none"
            raise UserError(f"unknown {self.kind} {name!r}; available: {known}") from None

    def __contains__(self, name: object) -> bool:
        discover()
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        discover()
        return iter(sorted(self._entries))

    def items(self) -> list[tuple[str, T]]:
        discover()
        return sorted(self._entries.items())


def _summary(obj: Any) -> str:
    """The docstring's first paragraph as one line (its first line alone may stop mid-sentence)."""
    paragraph = (obj.__doc__ or "").strip().split("\n\n")[0]
    return " ".join(paragraph.split())


# ---- scorers ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ScorerEntry:
    name: str
    fn: Callable[..., Any]
    options: type[ScorerOptions]
    modes: ModeGroup | None
    summary: str

    def parse_options(self, raw: dict[str, Any], where: str) -> ScorerOptions:
        """The options as the scorer's model; a bad one is a UserError naming `where` and the field."""
        try:
            return self.options.model_validate(raw)
        except ValidationError as exc:
            first = exc.errors()[0]
            field_name = ".".join(str(part) for part in first["loc"]) or "options"
            raise UserError(
                f"{where}: scorer {self.name!r}: option {field_name!r}: {plain_message(first)}"
            ) from None


scorers: Registry[ScorerEntry] = Registry("scorer")


def scorer(
    name: str, *, options: type[ScorerOptions] = NoOptions, modes: ModeGroup | None = None
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register `fn(context, options) -> Score` under `name`."""

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        scorers.add(name, ScorerEntry(name, fn, options, modes, _summary(fn)))
        return fn

    return register


def check_task_scorers(task: Any) -> None:
    """Check a loaded task's scorer names and options: a UserError naming the task and the field."""
    for spec in task.scorers:
        scorers.get(spec.name).parse_options(spec.options, f"task {task.id}")


def mode_groups() -> dict[str, ModeGroup]:
    """Every mode group some registered scorer uses, by name."""
    groups: dict[str, ModeGroup] = {}
    for _, entry in scorers.items():
        if entry.modes is not None:
            groups.setdefault(entry.modes.name, entry.modes)
    return groups


def task_mode_groups(tasks: Any) -> set[str]:
    """The mode groups whose run-level setting decides how some of these tasks score."""
    return {
        entry.modes.name
        for task in tasks
        for spec in task.scorers
        if (entry := scorers.get(spec.name)).modes is not None
    }


# ---- agents -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AgentEntry:
    name: str
    build: Callable[..., Any]  # (AgentSettings, its options) -> Agent
    options: type[AgentOptions]
    summary: str
    needs_desktop: bool = False  # every sample it runs gets a desktop

    def parse_options(
        self, raw: Mapping[str, Any] | AgentOptions, spell: Callable[[str], str] = option_name
    ) -> AgentOptions:
        """The options as the agent's model; a bad one is a UserError naming the agent and the option (as
        `spell` writes it: `--memory-window`)."""
        return parse_options(self.options, raw, owner=f"agent {self.name!r}", spell=spell)


agents: Registry[AgentEntry] = Registry("agent")


def agent(
    name: str,
    summary: str = "",
    *,
    options: type[AgentOptions] = NoAgentOptions,
    needs_desktop: bool = False,
) -> Callable[[type[T]], type[T]]:
    """Register an agent class, built for a run with `build(settings, options)`: the run's shared
    `AgentSettings` (model, cache, limits) and its own `options` (an instance of `options`, checked).
    `needs_desktop`: it works on a screen, so every sample it runs gets a desktop."""

    def register(cls: type[T]) -> type[T]:
        entry = AgentEntry(name, cls.build, options, summary or _summary(cls), needs_desktop)  # type: ignore[attr-defined]
        agents.add(name, entry)
        return cls

    return register


# ---- suite formats ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SuiteFormatEntry:
    name: str
    load: Callable[..., Any]  # (location: Path, options: dict) -> Suite
    prefix: str | None
    summary: str


suite_formats: Registry[SuiteFormatEntry] = Registry("suite format")


def suite_format(
    name: str, *, prefix: str | None = None
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a loader `(location, options) -> Suite`: `prefix` names it on the command line
    (`dabench:FILE`), `name` in a built-in suite's suite.json (`"format": "dabench"`)."""

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        suite_formats.add(name, SuiteFormatEntry(name, fn, prefix, _summary(fn)))
        return fn

    return register


# ---- sandbox backends and sample executors: classes registered by name ------------------------------


@dataclass(frozen=True)
class ClassEntry:
    name: str
    cls: type[Any]
    summary: str


backends: Registry[ClassEntry] = Registry("sandbox backend")
executors: Registry[ClassEntry] = Registry("sample executor")


def _register_class(registry: Registry[ClassEntry], name: str) -> Callable[[type[T]], type[T]]:
    def register(cls: type[T]) -> type[T]:
        cls.name = name  # type: ignore[attr-defined]
        registry.add(name, ClassEntry(name, cls, _summary(cls)))
        return cls

    return register


def backend(name: str) -> Callable[[type[T]], type[T]]:
    """Register a `SandboxBackend` subclass, built per sample as `cls(task, limits, additions=...)`
    (and `desktop=True` for a sample with a desktop)."""
    return _register_class(backends, name)


def executor(name: str) -> Callable[[type[T]], type[T]]:
    """Register where a run's samples execute (`--backend NAME`): a `SampleExecutor` subclass."""
    return _register_class(executors, name)


# ---- families -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FamilyEntry:
    name: str
    impl: Any  # an instance of the family's class, a subclass of `daharness.core.family.FamilyBase`
    summary: str
    order: int = field(default=100)


families: Registry[FamilyEntry] = Registry("family")


def family(name: str, *, order: int = 100) -> Callable[[type[T]], type[T]]:
    """Register a family's report figures and sample hooks (a class with no constructor arguments)."""

    def register(cls: type[T]) -> type[T]:
        families.add(name, FamilyEntry(name, cls(), _summary(cls), order))
        return cls

    return register


def options_schema(model: type[BaseModel]) -> dict[str, Any]:
    return model.model_json_schema()
