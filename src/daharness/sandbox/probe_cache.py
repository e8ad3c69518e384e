"""What probing this machine's bubblewrap found, remembered between commands.

`check_bwrap` starts a sandbox (bubblewrap, then Python in it) to see that bubblewrap can make its
namespaces here: about a third of a second that every command running samples paid before its first
sample. A success is kept in the user's cache folder under a key of everything the answer depends on:
the probe's command line, the bwrap and Python binaries it starts (path, size, modification time), the
kernel (release, version, boot), the user, the namespaces and restrictions this process runs under
(user and mount namespaces, seccomp, no_new_privs, capabilities), and the sysctls that allow or limit
namespaces. Any change of them probes again. A failure is never kept (it is probed, and said, each
time) and removes what was kept. Isolation does not depend on this: every sandbox is still made by
bubblewrap, which refuses to start when it cannot make it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from pathlib import Path

CACHE_FILE = "bwrap-probe.json"
_STATUS_FIELDS = ("Seccomp:", "NoNewPrivs:", "CapEff:", "CapPrm:", "CapBnd:")
_SYSCTLS = (
    "kernel/unprivileged_userns_clone",  # Debian's and Ubuntu's switch for unprivileged user namespaces
    "kernel/apparmor_restrict_unprivileged_userns",
    "user/max_user_namespaces",
    "user/max_mnt_namespaces",
    "user/max_pid_namespaces",
    "user/max_net_namespaces",
    "user/max_ipc_namespaces",
    "user/max_uts_namespaces",
    "user/max_cgroup_namespaces",
)


def user_cache_dir() -> Path:
    """daharness's folder in the user's cache (XDG_CACHE_HOME, else ~/.cache)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "daharness"


def probe_key(command: list[str], binaries: tuple[str, ...]) -> str:
    """A digest of everything the outcome of running the probe `command`, which starts `binaries`,
    depends on."""
    facts = {
        "command": command,
        "binaries": [_identity(binary) for binary in binaries],
        "kernel": [*os.uname()[2:4], _read("/proc/sys/kernel/random/boot_id")],
        "ids": [os.getuid(), os.getgid(), os.geteuid(), os.getegid()],
        "namespaces": [_link(f"/proc/self/ns/{kind}") for kind in ("user", "mnt", "pid", "net")],
        "status": [
            line for line in _read("/proc/self/status").splitlines() if line.startswith(_STATUS_FIELDS)
        ],
        "sysctls": {name: _read(f"/proc/sys/{name}") for name in _SYSCTLS},
    }
    return hashlib.sha256(json.dumps(facts, sort_keys=True).encode()).hexdigest()


def known_to_work(key: str) -> bool:
    """Whether a probe under the same `key` succeeded before."""
    try:
        return json.loads((user_cache_dir() / CACHE_FILE).read_text()).get("works") == key
    except (OSError, ValueError, AttributeError, RuntimeError):  # RuntimeError: no home folder
        return False


def remember_success(key: str) -> None:
    """Keep `key` as the one under which the probe succeeded (skipped where the cache is not writable)."""
    with contextlib.suppress(OSError, RuntimeError):
        folder = user_cache_dir()
        folder.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=folder, prefix=f".{CACHE_FILE}.")
        with os.fdopen(handle, "w") as file:
            json.dump({"works": key}, file)
        os.replace(temporary, folder / CACHE_FILE)  # whole: a concurrent reader sees the old or the new


def forget() -> None:
    """Drop what was kept: the probe failed, so the next command probes again."""
    with contextlib.suppress(OSError, RuntimeError):
        (user_cache_dir() / CACHE_FILE).unlink(missing_ok=True)


def _identity(path: str) -> list[object]:
    try:
        found = os.stat(path)
    except OSError:
        return [path]
    return [path, os.path.realpath(path), found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns]


def _read(path: str) -> str:
    try:
        with open(path) as file:
            return file.read().strip()
    except OSError:
        return ""


def _link(path: str) -> str:
    try:
        return os.readlink(path)
    except OSError:
        return ""
