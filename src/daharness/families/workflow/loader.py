"""Loader of Spider2-V task folders (`spider2v:DIR`), and of built-in suites written in the same format.

A task is a folder `<id>/` holding `<id>.json` (instruction, `config` setup steps, `evaluator`, tags...),
the files its setup copies in, its expected files, `init.sh` / `eval.sh`, `verbose_instruction.txt` and
`retrieved_chunk_*.txt`; DIR may hold such folders at any depth (`examples/<app>/<id>/`). Paths in the JSON
are relative to the official repository (`evaluation_examples/examples/<app>/<id>/FILE`) and are found
under DIR, else beside the task's JSON; each must resolve inside DIR (`core/paths.py`), else the task is
refused with the reason. A built-in suite's task may add a reference solution
(`solution.sh` or `solution.py`, run in the task's home, or `solution.actions.json`, screen actions run on
its desktop).

What a task needs that a local sandbox cannot give (a cloud account, a browser page, the internet, moving
the clock) makes it unsupported: it is listed in `Suite.unsupported` with the reason, never dropped
silently.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from daharness.core.errors import UserError
from daharness.core.jsonl import read_json, read_text
from daharness.core.paths import Refused, SuiteFolder
from daharness.core.registry import check_task_scorers, scorers, suite_format
from daharness.core.suite import Suite
from daharness.core.task import (
    AnswerFormat,
    Conjunction,
    Gold,
    GoldFile,
    ReferenceSolution,
    ScorerSpec,
    SetupStep,
    Task,
    TaskMetadata,
    WorkspaceFile,
)
from daharness.families.workflow import apps, getters, limits
from daharness.families.workflow.apps import web_standins
from daharness.families.workflow.cloud import tasks as cloud_tasks
from daharness.families.workflow.screen import SCREEN_GETTERS, is_launch
from daharness.sandbox.desktop.availability import desktop_problem

HOME = "/home/user"
SCORER_PREFIX = "spider2v."
INSTRUCTION_KINDS = ("abstract", "verbose")
INTERFACE_TAGS = frozenset({"cli", "gui", "cli+gui"})
INSTRUCTION_TAGS = frozenset(INSTRUCTION_KINDS)
OTHER_TAGS = frozenset({"account"})
VERBOSE_INTRO = "Here is a step-by-step tutorial from an expert instructing you how to complete it:"
VERBOSE_OUTRO = (
    "You can exactly follow the detailed plan above or proactively tackle the task based on the real-time "
    "environment interaction by yourself."
)
RAG_INTRO = "We also retrieve relevant documentation from the web to help you with the task:"
# the release's retrieved documentation (run_spider2v_agent.py's --rag_filename and --rag_topk defaults)
RAG_FILE = "retrieved_chunk_size_512_chunk_overlap_20_topk_4_embed_bge-large-en-v1.5.txt"
RAG_TOP = 4
RAG_SECTION = "Documentation Source:"
_FILE_RESULTS = {"vm_file": "file", "vm_script_output": "script_output", "local_file": "gold"}


class Unsupported(Exception):
    """The task needs something a local sandbox cannot give; the message says what."""


@suite_format("spider2v", prefix="spider2v:")
def spider2v_suite(location: Path, options: Mapping[str, Any]) -> Suite:
    """Spider2-V task folders (<id>/<id>.json); options: instruction=abstract|verbose, rag=True,
    cloud_settings=DIR|local (the accounts of BigQuery and Snowflake tasks; a suite.json may name `local`)."""
    instruction = str(options.get("instruction", "abstract"))
    if instruction not in INSTRUCTION_KINDS:
        raise UserError(f"--instruction must be abstract or verbose, not {instruction!r}")
    if not location.is_dir():
        raise UserError(f"{location}: not a folder of Spider2-V tasks")
    suite = SuiteFolder.at(location)
    manifest_file = suite.optional_file("suite.json", what="manifest")
    manifest = read_json(manifest_file) if manifest_file else {}
    if not isinstance(manifest, dict):
        raise UserError(f"{location}/suite.json: expected a JSON object")
    name = str(manifest.get("name") or "spider2v")
    names = [found for found in suite.find("*.json") if found.stem == found.parent.name]
    if not names:
        raise UserError(f"{location}: no Spider2-V task found (a folder <id>/ holding <id>.json)")
    accounts = cloud_tasks.CloudAccounts.chosen(
        options.get("cloud_settings") or manifest.get("cloud_settings")
    )
    reader = TaskReader(
        suite,
        name,
        instruction,
        bool(options.get("rag")),
        prompt_texts=baseline_texts(location),
        cloud=accounts,
    )
    tasks, unsupported = [], {}
    for found in names:
        try:
            tasks.append(reader.read(found))
        except (Unsupported, cloud_tasks.CloudUnsupported) as exc:
            unsupported[found.stem] = str(exc)
        except Refused as exc:
            unsupported[found.stem] = f"refused: {exc}"
    return Suite(
        name, tasks, str(manifest.get("description", "Spider2-V workflow tasks")),
        sources={"spider2v": str(location)}, unsupported=unsupported,
    )  # fmt: skip


@dataclass
class _Evaluator:
    """What the translation of one task's evaluator gathers."""

    scorers: list[ScorerSpec] = field(default_factory=list)
    gold: list[GoldFile] = field(default_factory=list)
    scripts: list[dict[str, str]] = field(default_factory=list)
    screen: bool = False  # a result is read on the screen: the task needs a desktop
    page_checks: bool = False  # an html_check opens a page, in the checks' environment


@dataclass
class TaskReader:
    folder: SuiteFolder  # every path a task names resolves inside it
    suite: str
    instruction: str = "abstract"
    rag: bool = False
    app: str | None = None  # of the task being read: Dagster, Airflow or Superset run as services
    # the baseline prompt's texts (the checkout's templates, or daharness's own), and why the checkout's
    # could not be read, if so
    prompt_texts: tuple[dict[str, str], str | None] = ({}, None)
    cloud: cloud_tasks.CloudAccounts | None = (
        None  # the accounts of BigQuery and Snowflake tasks (--cloud-settings)
    )
    needs: cloud_tasks.CloudNeeds = field(default_factory=cloud_tasks.CloudNeeds)  # of the task being read

    def _script_need(self, script: Path, *, setup: bool = False, live: bool = False) -> str | None:
        if not self.app:
            return limits.script_need(script, setup=setup, live=live)
        app = self.app
        return limits.script_need(
            script,
            apps.SERVICE_PORTS,
            setup=setup,
            live=live,
            installed=lambda name: apps.installed(app, name),
            agent_servers=app in apps.AGENT_SERVERS,
        )

    def read(self, name: PurePosixPath) -> Task:
        """The task whose JSON is `name` (relative to the suite folder)."""
        folder = self.folder.folder(name.parent, what="task folder")
        self.folder.tree(folder, what="task file")  # nothing in it leads out, nothing blocks a read
        path = self.folder.file(name.name, within=folder, what="task file")
        raw = read_json(path)
        if not isinstance(raw, dict):
            raise UserError(f"{path}: expected a JSON object")
        for key in ("instruction", "evaluator"):
            if key not in raw:
                raise UserError(f"{path}: missing field {key!r}")
        _check_shape(raw, path)
        self.app = raw.get("snapshot") if raw.get("snapshot") in apps.APPS else None
        if need := limits.application_need(_step_list(raw.get("config"))):
            raise Unsupported(need)
        if self.app and (
            need := apps.missing(self.app)
            or limits.web_api_need(folder, str(raw["instruction"]), web_standins.standin_hosts())
        ):
            raise Unsupported(need)
        tags = [str(tag) for tag in raw.get("tags", [])]
        self.needs = cloud_tasks.CloudNeeds()
        text, tags, plain = self._instruction(raw, folder, tags)
        texts, problem = self.prompt_texts
        prompt_texts = {**texts, **self._baseline_task(plain, folder)}
        files, setup = self._setup(raw.get("config", []), folder)
        evaluator = self._evaluator(raw["evaluator"], folder, path)
        if evaluator.page_checks and not self.app and not any(map(is_launch, setup)):
            raise Unsupported(
                "html_check opens a page in the checks' environment, where only an application's services "
                "and the setup's `launch` programs are started again, and this task's setup has neither"
            )
        postconfig = [
            step.model_dump()
            for step in self._steps(raw["evaluator"].get("postconfig", []), folder, postconfig=True)
        ]
        related = [str(app) for app in raw.get("related_apps", [])]
        data: dict[str, Any] = {
            "scripts": evaluator.scripts,
            "postconfig": postconfig,
            "official": _official(raw),
        }
        if self.needs.providers:  # a cloud task: what the family does around the agent with the accounts
            assert self.cloud is not None
            cloud_tasks.check_task(
                self.cloud, self.needs, self._texts(folder), text, desktop_problem() is None
            )
            data["cloud"] = self.needs.as_data(self.cloud)
            if note := cloud_tasks.instruction_note(self.cloud, self.needs):
                text = f"{text}\n{note}"
        task = Task(
            id=str(raw.get("id", path.stem)),
            suite=self.suite,
            family="workflow",
            instructions=[text],
            files=files,
            gold=Gold(files=evaluator.gold, data=data),
            answer_format=AnswerFormat(kind="files"),
            scorers=evaluator.scorers,
            conjunction=_conjunction(raw["evaluator"].get("conj", "and"), path),
            metadata=TaskMetadata(
                category=_category(tags),
                subcategory=str(raw.get("snapshot") or folder.parent.name),
                level=_level(raw.get("action_number")),
                tags=[*tags, *(f"app:{app}" for app in related)],
                source="spider2v",
                source_id=str(raw.get("id", path.stem)),
            ),
            setup=setup,
            prompt_texts=prompt_texts,
            warnings=[problem] if problem else [],
            reference=self._reference(folder),
            workdir=HOME,
            desktop=_needs_desktop(raw, path) or evaluator.screen,
        )
        try:
            check_task_scorers(task)
        except UserError as exc:
            raise Unsupported(f"evaluator options: {exc}") from None
        return task

    # ---- instruction ---------------------------------------------------------------------------------

    def _instruction(self, raw: dict[str, Any], folder: Path, tags: list[str]) -> tuple[str, list[str], str]:
        """The instruction as agents get it, the tags, and the instruction before the documentation was
        added (`--rag`; the baseline prompt sends the documentation apart)."""
        text = str(raw["instruction"])
        verbose_file = self.folder.optional_file("verbose_instruction.txt", within=folder)
        if self.instruction == "verbose" and "verbose" not in tags and verbose_file:
            tutorial = read_text(verbose_file).strip()
            text = f"{text}\n{VERBOSE_INTRO}\n{tutorial}\n{VERBOSE_OUTRO}"
            tags = ["verbose" if tag == "abstract" else tag for tag in tags]
        plain = text
        if self.rag:
            chunks = [
                read_text(chunk).strip() for chunk in self.folder.entries(folder, "retrieved_chunk*.txt")
            ]
            if chunks:
                text = "\n\n".join([text, RAG_INTRO, *chunks])
        return text, tags, plain

    def _texts(self, folder: Path) -> list[Path]:
        """The task folder's text files (instructions, SQL, scripts), read for what the task asks of a
        warehouse emulator."""
        found = [
            path for suffix in cloud_tasks.TEXT_SUFFIXES for path in self.folder.entries(folder, f"*{suffix}")
        ]
        return sorted(found, key=lambda path: path.name)

    def _baseline_task(self, instruction: str, folder: Path) -> dict[str, str]:
        """The instruction and, with --rag, the retrieved documentation apart, as the baseline prompt has
        them (a second system message), the documentation chosen as run_spider2v_agent.py chooses it."""
        texts = {"task.instruction": instruction}
        if self.rag:
            official = self.folder.optional_file(RAG_FILE, within=folder)
            chunks = [official] if official else self.folder.entries(folder, "retrieved_chunk*.txt")
            if chunks and (documentation := top_documentation(read_text(chunks[0]))):
                texts["task.documentation"] = documentation
        return texts

    # ---- setup ---------------------------------------------------------------------------------------

    def _setup(self, config: list[Any], folder: Path) -> tuple[list[WorkspaceFile], list[SetupStep]]:
        files: list[WorkspaceFile] = []
        listed = _step_list(config)
        if self.app:  # copies after a script happen then (into the folder it made), as officially
            first = next(
                (i for i, s in enumerate(listed) if s.get("type") != "copyfile_from_host_to_guest"), 0
            )
            copies, listed = listed[:first], listed[first:]
        else:
            copies = [s for s in listed if s.get("type") == "copyfile_from_host_to_guest"]
            listed = [s for s in listed if s.get("type") != "copyfile_from_host_to_guest"]
        for step in copies:
            params = step.get("parameters", {})
            source = self._source(str(params.get("src", "")), folder, "setup file")
            files.append(WorkspaceFile(path=in_home(str(params.get("dest", ""))), source=source))
        return files, self._steps(listed, folder)

    def _steps(self, config: list[Any], folder: Path, *, postconfig: bool = False) -> list[SetupStep]:
        """Setup or postconfig steps: scripts and commands to run, GUI steps kept as no-ops."""
        steps = []
        for step in _step_list(config):
            kind, params = str(step.get("type")), step.get("parameters", {}) or {}
            if kind == "script_and_execute":
                steps.append(self._script_step(params, folder, postconfig=postconfig))
            elif kind in ("execute", "command"):
                command = params.get("command", "")
                text = " ".join(map(str, command)) if isinstance(command, list) else str(command)
                if limits.GUI_COMMAND.search(text):
                    steps.append(
                        SetupStep(kind="open", args={"official": kind, "command": text, "argv": command})
                    )
                else:
                    steps.append(SetupStep(kind="command", args={"argv": command}))
            elif self.app and kind in apps.HEALTH_STEPS:
                page = {key: params[key] for key in ("url", "actions") if key in params}
                steps.append(
                    SetupStep(
                        kind="open", args={"official": kind, "service": apps.HEALTH_STEPS[kind], **page}
                    )
                )
            elif self.app and kind == "copyfile_from_host_to_guest":
                source = self._source(str(params.get("src", "")), folder, "setup file")
                steps.append(
                    SetupStep(
                        kind="copy",
                        args={"source": str(source), "dest": in_home(str(params.get("dest", "")))},
                    )
                )
            elif kind in cloud_tasks.STEP_KINDS and not postconfig:  # done with the accounts by the family
                if found := cloud_tasks.read_step(
                    self.cloud, self.needs, kind, params, lambda p: self._source(p, folder)
                ):
                    self.needs.steps.append(found)
            elif kind in cloud_tasks.ACCOUNT_STEPS:
                raise Unsupported(cloud_tasks.ACCOUNT_STEPS[kind])
            elif kind in limits.GUI_STEPS:
                steps.append(SetupStep(kind="open", args={"official": kind, **params}))
            else:
                raise Unsupported(
                    limits.setup_step_need(kind)
                    or f"setup step '{kind}' needs an app or account this sandbox does not have"
                )
        return steps

    def _script_step(self, params: dict[str, Any], folder: Path, *, postconfig: bool) -> SetupStep:
        """A script to run in the home. A postconfig script whose only need is a server on localhost
        (`wait.sh` asks JupyterLab whether its kernel is idle) asks the screen's applications: officially
        it runs right after the agent, while they still run, so it is a GUI step (run with a desktop
        before the agent's processes are stopped, its output not scored)."""
        script = self._source(str(params.get("src", "")), folder, "setup script")
        live = False
        if need := self._script_need(script, setup=True):
            live = postconfig and self._script_need(script, setup=True, live=True) is None
            if not live:
                raise Unsupported(need)
        dest = in_home(str(params.get("dest") or f"{HOME}/{script.name}"))
        if live:
            return SetupStep(
                kind="open", args={"official": "script_and_execute", "script": str(script), "dest": dest}
            )
        return SetupStep(kind="command", args={"script": str(script), "dest": dest})

    def _source(self, official: str, folder: Path, what: str = "file") -> Path:
        """A file named in the JSON: under the suite folder by its official path, else beside the JSON.
        Whichever place holds it, it must resolve inside the suite folder (Refused otherwise)."""
        parts = PurePosixPath(official).parts
        candidates: list[tuple[str | PurePosixPath, Path | None]] = []
        if "examples" in parts and not PurePosixPath(official).is_absolute():
            index = len(parts) - 1 - parts[::-1].index("examples")
            rest = PurePosixPath(*parts[index + 1 :]) if parts[index + 1 :] else ""
            candidates.append((rest, None))
            if folder.parent.parent.is_relative_to(self.folder.root):
                candidates.append((rest, folder.parent.parent))
        candidates += [(official, folder), (PurePosixPath(official).name, folder)]
        for name, within in candidates:
            if official and (found := self.folder.optional_file(name, within=within, what=what)):
                return found
        raise Unsupported(f"{what} {official!r} is not in the suite folder")

    def _reference(self, folder: Path) -> ReferenceSolution | None:
        for name, language in (
            ("solution.sh", "bash"),
            ("solution.py", "python"),
            ("solution.actions.json", "actions"),
        ):
            if solution := self.folder.optional_file(name, within=folder, what="reference solution"):
                return ReferenceSolution(language=language, code=read_text(solution))
        return None

    # ---- evaluator -----------------------------------------------------------------------------------

    def _evaluator(self, raw: dict[str, Any], folder: Path, path: Path) -> _Evaluator:
        funcs = raw.get("func")
        many = isinstance(funcs, list)
        funcs = funcs if many else [funcs]
        results = _per_func(raw.get("result"), many, len(funcs))
        expected = _per_func(raw.get("expected"), many, len(funcs))
        options = _per_func(raw.get("options"), many, len(funcs))
        out = _Evaluator()
        for index, func in enumerate(funcs):
            name = f"{SCORER_PREFIX}{func}"
            if not isinstance(func, str) or name not in scorers:
                raise Unsupported(f"evaluator function {func!r} is not available here")
            spec_options = dict(options[index] or {})
            spec_options["result"] = self._result(results[index], folder, out)
            spec_options["expected"] = self._expected(expected[index], folder, out)
            if func in limits.OUTPUT_FUNCS:
                self._check_reproducible(out.gold, folder)
            out.scorers.append(ScorerSpec(name=name, options=spec_options))
        return out

    def _result(self, raw: Any, folder: Path, out: _Evaluator) -> dict[str, Any]:
        if not raw:
            return {"kind": "none"}
        kind = str(raw.get("type"))
        if kind == "vm_file":
            if not isinstance(raw.get("path"), str):
                raise Unsupported("evaluator collects several files at once (vm_file with a list)")
            return {"kind": "file", "path": in_home(raw["path"])}
        if kind == "vm_script_output":
            return {"kind": "script_output", "path": self._check_script(raw, folder, out, default=None)}
        if kind in ("validate_correct_url", "html_check"):  # a check script's output and the browser
            return self._browser_check(kind, raw, folder, out)
        if kind == "local_file":
            return {"kind": "gold", "path": self._gold(raw, folder, out)}
        if kind == getters.SUPERSET_PAGE:  # the browser's tabs, read on the screen right after the agent
            _needs_screen(kind, out)
            config = {key: str(raw.get(key, default)) for key, default in getters.SUPERSET_DEFAULTS.items()}
            return {"kind": kind, "value": config}
        if kind in cloud_tasks.GETTER_KINDS:  # asked of the accounts' API by the family after the agent
            return cloud_tasks.read_getter(
                self.cloud, self.needs, kind, raw, lambda p: self._source(p, folder)
            )
        if kind in SCREEN_GETTERS:  # read on the sample's screen right after the agent
            _needs_screen(kind, out)
            return {"kind": "screen", "path": kind}
        if kind == "dbt_profiles":  # the first profiles.yml found in the listed folders
            # `$VAR` folders are skipped: officially they are echoed in a fresh non-login shell, where
            # (as the official getter's comment says) the variable is not set
            folders = [str(d) for d in raw.get("dirs") or [] if not str(d).startswith("$")]
            return {
                "kind": "first_file",
                "paths": [in_home(f"{d.rstrip('/')}/profiles.yml") for d in folders],
            }
        raise Unsupported(
            f"evaluator reads '{kind}' (a browser, GUI or cloud state this sandbox does not have)"
        )

    def _browser_check(self, kind: str, raw: dict[str, Any], folder: Path, out: _Evaluator) -> dict[str, Any]:
        """`validate_correct_url` (the shown tab's URL holds each part of eval.sh's output) and `html_check`
        (eval.sh's output is a page whose CSS paths show elements): eval.sh runs in the checks'
        environment, and for `html_check` on the live screen first (`getters.py` says why)."""
        _needs_screen(kind, out)
        dest = self._check_script(raw, folder, out, default=f"{HOME}/eval.sh")
        if kind == "validate_correct_url":
            return {
                "kind": kind,
                "path": dest,
                "value": {"goto_prefix": str(raw.get("goto_prefix", "https://"))},
            }
        paths = raw.get("css_paths") or []
        if not isinstance(paths, list):
            raise Unsupported("html_check's css_paths is not a list")
        timeout = raw.get("timeout", 5000)
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
            raise Unsupported(f"html_check's timeout is not a number of milliseconds: {timeout!r}")
        value = {"css_paths": [str(path) for path in paths], "timeout": float(timeout)}
        out.page_checks = True
        return {"kind": kind, "path": dest, "value": value}

    def _check_script(self, raw: dict[str, Any], folder: Path, out: _Evaluator, default: str | None) -> str:
        """A script the checks run after the agent (`src`, run as `dest`): where it runs in the home."""
        script = self._source(str(raw.get("src", "")), folder, "check script")
        if need := self._script_need(script):
            raise Unsupported(need)
        dest = in_home(str(raw.get("dest") or default or f"{HOME}/{script.name}"))
        _add_script(out, script, dest)
        return dest

    def _expected(self, raw: Any, folder: Path, out: _Evaluator) -> dict[str, Any]:
        if not raw:
            return {"kind": "none"}
        kind = str(raw.get("type"))
        if kind == "local_file":
            return {"kind": "gold", "path": self._gold(raw, folder, out)}
        if kind == "rule":
            return {"kind": "rule", "value": raw.get("rules")}
        if kind == "vm_file" and isinstance(raw.get("path"), str):  # a file the checks make (a gold run)
            return {"kind": "file", "path": in_home(raw["path"]), "value": {"made_by_checks": True}}
        raise Unsupported(f"expected value of type '{kind}' needs a browser, GUI or cloud state")

    def _gold(self, raw: dict[str, Any], folder: Path, out: _Evaluator) -> str:
        source = self._source(str(raw.get("path", "")), folder, "expected file")
        name = source.relative_to(folder).as_posix() if source.is_relative_to(folder) else source.name
        if all(gold.name != name for gold in out.gold):
            out.gold.append(GoldFile(name=name, source=source))
        return name

    def _check_reproducible(self, gold: list[GoldFile], folder: Path) -> None:
        """Outputs compared with a gold notebook must be reproducible offline with what is installed."""
        for item in gold:
            if item.source.suffix == ".ipynb":
                need = limits.executed_code_need(limits.notebook_code(item.source), f"notebook {item.name}")
                if need:
                    raise Unsupported(need)


def _check_shape(raw: dict[str, Any], path: Path) -> None:
    """The JSON types the reader relies on; a wrong one is an error naming the file and the field."""
    evaluator = raw["evaluator"]
    if not isinstance(evaluator, dict):
        raise UserError(f"{path}: field 'evaluator' must be an object")
    lists = {"tags": raw.get("tags"), "related_apps": raw.get("related_apps"), "config": raw.get("config"),
             "evaluator.postconfig": evaluator.get("postconfig")}  # fmt: skip
    for name, value in lists.items():
        if value is not None and not isinstance(value, list):
            raise UserError(f"{path}: field {name!r} must be a list")
    for name in ("config", "evaluator.postconfig"):
        for index, step in enumerate(lists[name] or []):
            if isinstance(step, dict) and not isinstance(step.get("parameters") or {}, dict):
                raise UserError(f"{path}: field '{name}[{index}].parameters' must be an object")
    many = isinstance(evaluator.get("func"), list)
    for key in ("result", "expected", "options"):
        value = evaluator.get(key)
        items = enumerate(value) if many and isinstance(value, list) else [(None, value)]
        for index, item in items:
            if item and not isinstance(item, dict):
                name = f"evaluator.{key}" if index is None else f"evaluator.{key}[{index}]"
                raise UserError(f"{path}: field {name!r} must be an object")


def baseline_texts(location: Path) -> tuple[dict[str, str], str | None]:
    """The baseline prompt's templates: the Spider2-V checkout's that `location` lies in, else daharness's
    own; with the reason when the checkout's could not be read (its tasks then carry it as a warning)."""
    from daharness.families.workflow.baseline.own_prompt import OWN_TEXTS
    from daharness.families.workflow.baseline.templates import find_checkout, read_release

    root = find_checkout(location)
    if root is None:
        return OWN_TEXTS.flat(), None
    try:
        return read_release(root).flat(), None
    except UserError as exc:
        return OWN_TEXTS.flat(), f"the desktop agent's prompt is daharness's own: {exc}"


def top_documentation(text: str, top: int = RAG_TOP) -> str | None:
    """The retrieved documentation as run_spider2v_agent.py gives it (`get_retrieved_context`): the file's
    text stripped, cut after its first `top` "Documentation Source:" sections; None when it is empty."""
    text = text.strip()
    if not text:
        return None
    sections = text.split(RAG_SECTION)
    return RAG_SECTION.join(sections[: top + 1]) if len(sections) > top + 1 else text


def _needs_screen(kind: str, out: _Evaluator) -> None:
    """The getter `kind` reads the sample's screen: the task needs a desktop (unsupported without one)."""
    if problem := desktop_problem():
        raise Unsupported(f"evaluator reads '{kind}' on a screen, and there is none here: {problem}")
    out.screen = True


def _add_script(out: _Evaluator, script: Path, dest: str) -> None:
    """A check script to run after the agent, once however many functions read its output."""
    for known in out.scripts:
        if known["dest"] == dest:
            if known["source"] != str(script):
                raise Unsupported(f"two different check scripts are run as {dest}")
            return
    out.scripts.append({"source": str(script), "dest": dest})


def in_home(path: str) -> str:
    """A path of the official VM as a path relative to the task's home (the sandbox workspace)."""
    clean = path.replace("~/", f"{HOME}/", 1) if path.startswith("~/") else path
    if not clean.startswith(f"{HOME}/"):
        raise Unsupported(f"uses {path!r}, outside the home folder {HOME}")
    return clean.removeprefix(f"{HOME}/")


def _step_list(config: Any) -> list[dict[str, Any]]:
    return [step for step in config or [] if isinstance(step, dict)]


def _per_func(value: Any, many: bool, count: int) -> list[Any]:
    if not many:
        return [value]
    if value is None:
        return [None] * count
    if not isinstance(value, list) or len(value) != count:
        raise Unsupported("evaluator lists do not match its functions")
    return value


def _conjunction(raw: Any, path: Path) -> Conjunction:
    """Spider2-V's `and`: 0 as soon as one function gives 0, else the mean; `or`: the best value."""
    if raw == "and":
        return Conjunction.all_mean
    if raw == "or":
        return Conjunction.max
    raise UserError(f"{path}: evaluator.conj must be 'and' or 'or', not {raw!r}")


def _official(raw: dict[str, Any]) -> dict[str, Any]:
    """Fields of the official task kept as they are (for readers of the task)."""
    return {key: raw.get(key) for key in ("counterpart", "source", "snapshot", "action_number")}


def _category(tags: list[str]) -> str | None:
    rest = [tag for tag in tags if tag not in INTERFACE_TAGS | INSTRUCTION_TAGS | OTHER_TAGS]
    return rest[0] if rest else None


def _level(actions: Any) -> str | None:
    """The paper's difficulty by the verbose instruction's number of actions: <=5, 6-15, >15."""
    if not isinstance(actions, int):
        return None
    return "easy" if actions <= 5 else "medium" if actions <= 15 else "hard"


def _needs_desktop(raw: dict[str, Any], path: Path) -> bool:
    """A task that declares `"desktop": true` (a daharness addition: its checks read what only a screen
    holds) runs only where a sample can have a desktop."""
    if raw.get("desktop") is None:
        return False
    if not isinstance(raw["desktop"], bool):
        raise UserError(f"{path}: field 'desktop' must be true or false")
    if raw["desktop"] and (problem := desktop_problem()):
        raise Unsupported(f"needs a desktop: {problem}")
    return bool(raw["desktop"])
