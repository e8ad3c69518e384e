"""Phase-1 measurement: start one application as a sample's service would, and print its setup time
and peak memory. It runs in bubblewrap with its own network (loopback only), PID and user namespaces,
in a fresh control group whose accounting gives the peak (page cache charged to the group included)
and whose processes' PSS is sampled while it runs.

  python scripts/apps/measure_startup.py dagster|airflow|superset [--repeat N] [--settle S]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from daharness.sandbox.bwrap import find_bwrap
from daharness.sandbox.cgroups import SandboxCgroup

HERE = Path(__file__).resolve().parent
APPSERVICES = HERE.parent.parent / "src/daharness/families/workflow/apps/standins/appservices.py"
APPS = Path(os.environ.get("DAHARNESS_APPS", Path.home() / ".cache/daharness/apps"))

DAGSTER = """
cd "$HOME" && dagster project scaffold --name hello-proj >/dev/null && cd hello-proj
export DAGSTER_HOME="$HOME/.dagster"; mkdir -p "$DAGSTER_HOME"; touch "$DAGSTER_HOME/dagster.yaml"
start=$(date +%s.%N)
dagster dev -p 3000 >start_server.log 2>&1 &
until curl -sf -o /dev/null http://127.0.0.1:3000/server_info; do sleep 0.2; done
served=$(echo "$(date +%s.%N) - $start" | bc)
until curl -sf http://127.0.0.1:3000/graphql -H 'Content-Type: application/json' \
  -d '{"query":"{repositoriesOrError{__typename}}"}' | grep -q RepositoryConnection; do sleep 0.2; done
echo "{\\"webserver\\": $served, \\"code location loaded\\": $(echo "$(date +%s.%N) - $start" | bc)}"
[ -n "$DEBUG_LOG" ] && cat start_server.log >&2
"""
AIRFLOW = f"""
mkdir -p "$HOME/proj/dags" && cd "$HOME/proj"
printf 'from pendulum import datetime\\nfrom airflow.decorators import dag, task\\n@dag(start_date=datetime(2024,1,1), schedule=None)\\ndef hello():\\n    @task\\n    def say():\\n        return 1\\n    say()\\nhello()\\n' > dags/hello.py
python3 {APPSERVICES} start airflow "$HOME/proj"
"""
SUPERSET = f"python3 {APPSERVICES} start superset\n"
SCRIPTS = {"dagster": DAGSTER, "airflow": AIRFLOW, "superset": SUPERSET}


def pss_sum(group: SandboxCgroup) -> int:
    total = 0
    try:
        pids = [int(p) for p in (group.folders["memory"] / "cgroup.procs").read_text().split()]
    except OSError:
        pids = []
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1]) * 1024
        except (OSError, ValueError):
            continue
    return total


def measure(app: str, settle: float) -> dict[str, object]:
    work = Path(tempfile.mkdtemp(prefix=f"measure-{app}-"))
    (work / "home").mkdir()
    work.chmod(0o777)
    group = SandboxCgroup.create()
    assert group is not None and "memory" in group.controllers, "needs a memory control group"
    env_path = f"{APPS / app}/bin:/usr/bin:/bin" if app != "airflow" else "/usr/bin:/bin"
    script = (
        f"export HOME={work}/home PATH={env_path} DAHARNESS_APPS={APPS} DAHARNESS_APP_STATE={work}/state\n"
    )
    script += SCRIPTS[app] + f"\nsleep {settle}\n"
    bwrap = [
        str(find_bwrap()), "--die-with-parent", "--unshare-net", "--unshare-pid", "--unshare-ipc",
        "--unshare-user", "--uid", "65534", "--gid", "65534", "--ro-bind", "/", "/", "--dev", "/dev",
        "--proc", "/proc", "--tmpfs", "/tmp", "--bind", str(work), str(work), "--", "bash", "-e", "-c", script,
    ]  # fmt: skip
    peak_pss = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak_pss
        while not done.wait(0.5):
            peak_pss = max(peak_pss, pss_sum(group))

    sampler = threading.Thread(target=sample, daemon=True)
    start = time.monotonic()
    sampler.start()
    # only the memory group: a v1 cpu group would weigh the whole service as one process against every
    # other process of a busy machine, and measure that machine instead of the service
    memory = group.folders["memory"]
    cpuacct = Path("/sys/fs/cgroup/cpuacct") / memory.name  # accounting only: no weight, no cap
    cpuacct.mkdir()
    joins = f'echo $$ > "{memory}/cgroup.procs" && echo $$ > "{cpuacct}/cgroup.procs"'
    join = ["/bin/sh", "-c", f'{joins} && exec "$@"', "measure", *bwrap]
    proc = subprocess.run(join, capture_output=True, text=True)
    done.set()
    sampler.join()
    wall = time.monotonic() - start - settle
    result: dict[str, object] = {"app": app, "exit": proc.returncode, "wall_s": round(wall, 1)}
    for line in proc.stdout.splitlines():
        if line.startswith("{"):
            result["stages_s"] = {k: round(v, 1) for k, v in json.loads(line).items()}
    if proc.returncode != 0:
        result["error"] = (proc.stdout + proc.stderr)[-1500:]
    result["cpu_s_incl_settle"] = round(int((cpuacct / "cpuacct.usage").read_text()) / 1e9, 1)
    for _ in range(100):  # the namespace's processes leave the group a moment after bwrap exits
        try:
            cpuacct.rmdir()
            break
        except OSError:
            time.sleep(0.05)
    result["cgroup_peak_mb"] = round((group.memory_peak_bytes() or 0) / 2**20)
    result["pss_peak_mb"] = round(peak_pss / 2**20)
    group.remove()
    shutil.rmtree(work, ignore_errors=True)
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("app", choices=sorted(SCRIPTS))
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--settle", type=float, default=10.0, help="seconds kept running after ready")
    args = parser.parse_args()
    for _ in range(args.repeat):
        print(json.dumps(measure(args.app, args.settle)), flush=True)


if __name__ == "__main__":
    main()
