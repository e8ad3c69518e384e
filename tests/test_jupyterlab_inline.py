"""JupyterLab as a task's setup starts it in the sandbox: its kernels plot inline, as in the official VM
(the sandbox's own Python draws with Agg, which in a notebook only warns and shows nothing)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from daharness.core.limits import Limits
from daharness.core.task import Task, WorkspaceFile
from daharness.runs.pipeline import SandboxSettings
from daharness.runs.pipeline import started as sandbox_of
from daharness.sandbox.desktop import apps

pytest.importorskip("jupyterlab", reason="JupyterLab is not installed (pip install -e '.[desktop]')")

# a kernel of the server (started through its REST API), asked for its plotting backend over its own
# connection file: the kernel JupyterLab's notebooks get
ASK_A_KERNEL = """
import http.cookiejar, json, time, urllib.request
from jupyter_client import BlockingKernelClient
from jupyter_core.paths import jupyter_runtime_dir
cookies = http.cookiejar.CookieJar()
web = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(cookies))
for _ in range(600):
    try:
        web.open("http://127.0.0.1:PORT/lab", timeout=2).close()  # sets the _xsrf cookie a POST needs
        break
    except OSError:
        time.sleep(0.1)
xsrf = next(cookie.value for cookie in cookies if cookie.name == "_xsrf")
ask = urllib.request.Request("http://127.0.0.1:PORT/api/kernels", data=b"{}", method="POST",
                             headers={"X-XSRFToken": xsrf})
kernel = json.load(web.open(ask, timeout=60))["id"]
client = BlockingKernelClient(connection_file=f"{jupyter_runtime_dir()}/kernel-{kernel}.json")
client.load_connection_file()
client.start_channels(hb=False)  # (its heartbeat gives up on a kernel that is still importing)
said = []
client.execute_interactive("import matplotlib; print(matplotlib.get_backend())", timeout=120,
                           output_hook=lambda m: said.append(m["content"].get("text", "")))
print(json.dumps("".join(said).strip()))
client.stop_channels()
"""


def test_jupyterlabs_kernels_plot_inline(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("x\n")
    task = Task(id="lab", suite="t", family="workflow", instructions=["x"],
                files=[WorkspaceFile(path="notes.txt", source=tmp_path / "notes.txt")])  # fmt: skip
    settings = SandboxSettings(limits=Limits(step_timeout_s=120))
    with sandbox_of(task, settings) as box:  # as a sample gets it: with what its family adds
        assert box.python("import matplotlib; print(matplotlib.get_backend())").stdout == "Agg\n"
        # as a desktop's `start_program` starts it (this sandbox has no screen: JupyterLab needs none)
        started = box.bash(apps.launch_command(apps.jupyterlab(box.workdir), "jupyterlab"))
        assert started.ok, started
        asked = box.python(ASK_A_KERNEL.replace("PORT", str(apps.JUPYTER_PORT)))
        assert asked.ok, asked
        assert json.loads(asked.stdout.splitlines()[-1]) == "module://matplotlib_inline.backend_inline"
