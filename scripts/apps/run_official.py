"""Phase-1 check of the stand-ins: run an official Spider2-V task's init.sh, then optionally a solution
script, then its eval.sh, unchanged, in bubblewrap as a sample would (own network with loopback, own
PID and user namespaces, /home/user as the home, conda.sh read-only, the stand-ins first on PATH), and
print the check's output with the verdict of the task's include/exclude rules.

  python scripts/apps/run_official.py TASK_DIR [--solution SCRIPT] [--keep]

GUI setup steps (browser, *_webui_init) are not run here: the desktop is issue 24; for Airflow and
Superset the login the webui_init step performs is tried over HTTP instead.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from daharness.sandbox.bwrap import find_bwrap

HERE = Path(__file__).resolve().parent
STANDINS = HERE.parent.parent / "src/daharness/families/workflow/apps/standins"
APPS = Path(os.environ.get("DAHARNESS_APPS", Path.home() / ".cache/daharness/apps"))
NO_OP = "#!/bin/sh\nexit 0\n"
SUDO = """#!/bin/sh
# no root in the sandbox: the command runs as the sandbox's user; -u NAME becomes PGUSER for the
# PostgreSQL clients (sudo -u postgres createuser ...)
while [ $# -gt 0 ]; do
  case "$1" in
    -S) read -r _ || true; shift ;;
    -u) export PGUSER="$2"; shift 2 ;;
    --) shift; break ;;
    -*) shift ;;
    *) break ;;
  esac
done
[ $# -eq 0 ] && exit 0
# `sudo mysql` reaches MariaDB's root on the VM (unix_socket); here root has no password instead
case "$1" in mysql|mariadb) [ -z "${PGUSER:-}" ] && { cmd="$1"; shift; exec "$cmd" -uroot "$@"; } ;; esac
exec "$@"
"""
HOSTS = "127.0.0.1 localhost db superset_db postgres\n::1 localhost\n"
WEBUI_LOGIN = {  # what astro_webui_init / superset_webui_init log into, tried over HTTP
    "astro_webui_init": "curl -s -o /dev/null -w 'airflow login page %{http_code}\\n' http://localhost:8080/login/",
    "superset_webui_init": "curl -s -o /dev/null -w 'superset login page %{http_code}\\n' http://localhost:8088/login/",
}


def tools(folder: Path) -> None:
    folder.mkdir()
    for name in ("gnome-terminal", "code", "google-chrome", "chromium", "chromium-browser", "xdg-open"):
        (folder / name).write_text(NO_OP)
    (folder / "sudo").write_text(SUDO)
    for name in ("astro", "docker", "appservices.py"):
        shutil.copy(STANDINS / name, folder / name)
    for path in folder.iterdir():
        path.chmod(0o755)


def copy_in(task_dir: Path, home: Path, src: str, dest: str) -> str:
    """A shell line that copies the task file to `dest` when the driver reaches it (setup order)."""
    source = task_dir / Path(src).name
    if not source.exists():
        return f"echo '  (missing from this copy: {src})'"
    return (
        f"mkdir -p {shlex.quote(str(Path(dest).parent))} && cp {shlex.quote(str(source))} {shlex.quote(dest)}"
    )


def driver(task: dict, task_dir: Path, home: Path, solution: Path | None) -> str:
    lines = [
        "set +e",
        "for i in $(seq 50); do ip -brief addr show lo | grep -q 172.17.0.1 && break; sleep 0.1; done",
        "cd /home/user",
    ]
    # the VM's servers run before any script: PostgreSQL always, MariaDB (its MySQL) for Dagster
    lines.append(f"python3 {STANDINS / 'appservices.py'} start postgres >/dev/null")
    if task.get("snapshot") == "dagster":
        lines.append(f"python3 {STANDINS / 'appservices.py'} start mariadb >/dev/null")
    for step in task["config"]:
        kind, params = step["type"], step.get("parameters", {})
        if kind == "copyfile_from_host_to_guest":
            lines.append(copy_in(task_dir, home, params["src"], params["dest"]))
        elif kind == "script_and_execute":
            lines.append(copy_in(task_dir, home, params["src"], params["dest"]))
            lines += [f"echo '### setup {params['dest']}'", "t0=$(date +%s.%N)",
                      f"(cd /home/user && bash {params['dest']})",
                      "echo \"### setup took $(echo \"$(date +%s.%N) - $t0\" | bc) s\""]  # fmt: skip
        elif kind in WEBUI_LOGIN:
            lines.append(WEBUI_LOGIN[kind])
    if solution:
        shutil.copy(solution, home / "solution.sh")
        lines += ["echo '### solution'", "(cd /home/user && bash solution.sh)"]
    evaluator = task["evaluator"]
    for step in evaluator.get("postconfig", []):
        if step["type"] == "copyfile_from_host_to_guest":
            lines.append(copy_in(task_dir, home, step["parameters"]["src"], step["parameters"]["dest"]))
    results = evaluator["result"] if isinstance(evaluator["result"], list) else [evaluator["result"]]
    for index, result in enumerate(results):
        if "src" in result and result["src"].endswith(".sh"):
            lines.append(copy_in(task_dir, home, result["src"], result["dest"]))
            lines += [f"echo '### check {index} {result['type']}'", f"(cd /home/user && bash {result['dest']})",
                      f"echo '### end {index}'"]  # fmt: skip
    return "\n".join(lines) + "\n"


def verdicts(task: dict, output: str) -> list[str]:
    evaluator = task["evaluator"]
    expected = evaluator["expected"] if isinstance(evaluator["expected"], list) else [evaluator["expected"]]
    found = []
    for index, rule in enumerate(expected):
        start, end = output.find(f"### check {index} "), output.find(f"### end {index}")
        text = output[start:end] if start >= 0 else ""
        rules = rule.get("rules", {})
        ok = all(s in text for s in rules.get("include", [])) and not any(
            s in text for s in rules.get("exclude", [])
        )
        found.append(
            f"check {index}: {'PASS' if ok else 'FAIL'} (include {rules.get('include')}, exclude {rules.get('exclude')})"
        )
    return found


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("task_dir", type=Path)
    parser.add_argument("--solution", type=Path)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    task_dir = args.task_dir.resolve()
    task = json.loads((task_dir / f"{task_dir.name}.json").read_text())
    work = Path(tempfile.mkdtemp(prefix="official-"))
    home, state, tool_dir = work / "home", work / "state", work / "tools"
    home.mkdir()
    state.mkdir()
    (home / "projects").mkdir()
    (home / ".dagster").mkdir()  # as the snapshot made it: DAGSTER_HOME with an empty dagster.yaml
    (home / ".dagster" / "dagster.yaml").write_text("")
    (home / "projects" / "superset").mkdir()
    (home / "projects" / "superset" / "docker-compose-image-tag.yml").write_text(
        "# Superset's compose project: the local stand-in runs superset_app and superset_db\nservices:\n"
        "  superset:\n  db:\n")  # fmt: skip
    tools(tool_dir)
    (work / "hosts").write_text(HOSTS)
    passwd = [line for line in Path("/etc/passwd").read_text().splitlines() if not line.startswith("nobody:")]
    (work / "passwd").write_text("\n".join([*passwd, "user:x:65534:65534:user:/home/user:/bin/bash"]) + "\n")
    (work / "driver.sh").write_text(driver(task, task_dir, home, args.solution))
    for path in [work, *work.rglob("*")]:
        os.chmod(path, 0o777 if path.is_dir() else 0o755)
    env_path = f"{tool_dir}:/usr/bin:/bin"
    bwrap = [
        str(find_bwrap()), "--die-with-parent", "--unshare-net", "--unshare-pid", "--unshare-ipc",
        "--unshare-user", "--uid", "65534", "--gid", "65534", "--cap-add", "CAP_NET_ADMIN",
        "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
        "--ro-bind", str(work / "hosts"), "/etc/hosts", "--ro-bind", str(work / "passwd"), "/etc/passwd",
        "--tmpfs", "/run", "--dir", "/run/mysqld", "--tmpfs", "/var/lib", "--dir", "/var/lib/mysql-files", "--tmpfs", "/home", "--bind", str(home), "/home/user",
        "--ro-bind", str(STANDINS / "conda.sh"), "/home/user/anaconda3/etc/profile.d/conda.sh",
        "--bind", str(state), "/tmp/daharness-apps", "--bind", str(work), str(work),
        "--ro-bind", str(task_dir), str(task_dir),
        "--clearenv", "--setenv", "HOME", "/home/user", "--setenv", "PATH", env_path, "--setenv", "USER", "user",
        "--setenv", "DAHARNESS_APPS", str(APPS), "--setenv", "DAHARNESS_APP_STATE", "/tmp/daharness-apps",
        "--setenv", "LANG", "C.UTF-8", "--chdir", "/home/user", "--", "bash", str(work / "driver.sh"),
    ]  # fmt: skip
    start = time.monotonic()
    # the Docker host address of the Airflow tasks' connections, on the sample's loopback: added from
    # outside (root joins the sandbox's network namespace), since the sandbox's user has no capability
    info_read, info_write = os.pipe()
    bwrap[1:1] = ["--info-fd", str(info_write)]
    proc = subprocess.Popen(
        bwrap, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, pass_fds=[info_write]
    )
    os.close(info_write)
    with os.fdopen(info_read) as info:
        child = json.loads(info.read() or "{}").get("child-pid")
    if child:
        subprocess.run(
            ["nsenter", "-t", str(child), "-n", "ip", "addr", "add", "172.17.0.1/32", "dev", "lo"],
            check=False,
        )
    stdout, stderr = proc.communicate()
    done = subprocess.CompletedProcess(bwrap, proc.returncode, stdout, stderr)
    print(done.stdout)
    if done.stderr.strip():
        print("--- stderr\n" + done.stderr[-3000:])
    print(f"--- {task_dir.parent.name}/{task_dir.name}: {time.monotonic() - start:.0f} s")
    for line in verdicts(task, done.stdout):
        print(line)
    if args.keep:
        print(f"kept: {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
