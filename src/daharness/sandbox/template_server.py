"""The kernel template: a process that has imported the data libraries once, and forks each sandbox's
kernel into that sandbox's namespaces, so that no sample pays for `import pandas` again.

Standalone (standard library only) and run by `template.py`, which gives it this text on a descriptor, so no
file of daharness is named by anything the forked kernels inherit. It runs as root, in a mount namespace
of its own whose /tmp is private and empty as a sandbox's is (so that matplotlib's folders, set by the
sandbox's own MPLCONFIGDIR and HOME, are what they are in a sandbox) but for the folders of its own Python
that live under /tmp (a venv made there), mounted back read-only as the sandbox mounts them; it never
reads anything of a sample: each request carries only descriptors and the sample's control groups. The request's fork (the
"waiter") joins the sample's control groups and namespaces, reads the sample's environment and kernel
settings from a descriptor, and forks the kernel, which becomes what bubblewrap makes of a sandbox's
first process: a new session, no new privileges, no capabilities, only descriptors 0-2, the sandbox's
environment and working folder, fresh random seeds. The kernel then drops to the sample's user id as
it always does (`daharness_kernel/server.py`). The waiter reports the kernel's wait status on a pipe.
What the sample can see differently: a root `sh` (bwrap's command, which holds the namespaces) where
the kernel used to be PID 2, and the kernel's parent outside its PID namespace (PPID 0).

It imports in two stages: the "preload" modules (numpy, pandas) before it says it is ready, then the
"later" ones (matplotlib, scipy, scikit-learn) one by one whenever no fork was asked for in the last half
second, so a burst of sandbox starts need not wait seconds for scikit-learn; a kernel forked before a module is loaded imports it itself.

Protocol on the descriptor named by its argument (a SOCK_SEQPACKET socket): the template sends {"ready", "preloaded",
"failed"} (each module it could not import, and why); each
request is JSON {"cgroups": [folders]} with descriptors [namespaces (cgroup, ipc, uts, net, pid, mnt)...,
stdin, stdout, stderr, status, setup], answered by {"pid": waiter} or {"error": text}; or {"load_all": true}
without descriptors, answered by {"preloaded": [...], "failed": {...}} once every module is loaded.
"""

import ctypes
import gc
import importlib
import json
import os
import select
import signal
import socket
import struct
import sys

CLONE_NEWNS = 0x00020000
MS_RDONLY = 1
MS_REMOUNT = 32
MS_BIND = 4096
PR_CAPBSET_DROP = 24
PR_SET_NO_NEW_PRIVS = 38
PR_SET_CHILD_SUBREAPER = 36
MS_REC = 0x4000
MS_PRIVATE = 1 << 18
_IDLE_S = 0.5  # how long no fork is asked for before the template imports its next "later" module
NAMESPACES = 6  # cgroup, ipc, uts, net, pid, mnt: the mount namespace last (it changes the root)
_libc = ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        number = ctypes.get_errno()
        raise OSError(number, f"{what}: {os.strerror(number)}")


def _python_folders_in_tmp() -> list:
    """The folders of this Python under /tmp (its prefixes and import path: a venv made in /tmp), the
    outermost of each: a private /tmp would hide them, and every import of the preload would fail."""
    found = set()
    for entry in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, *sys.path):
        for path in (os.path.abspath(entry), os.path.realpath(entry)):
            if path.startswith("/tmp/") and os.path.isdir(path):
                found.add(path)
    return sorted(path for path in found if not any(path.startswith(other + "/") for other in found))


def _private_tmp(keep: list) -> None:
    """An empty /tmp of this process's own, with the folders `keep` of the host's /tmp mounted back
    read-only at their paths (through a descriptor of the host's /tmp, opened before the tmpfs hides it)."""
    _check(_libc.unshare(CLONE_NEWNS), "unshare")
    _check(_libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "make mounts private")
    host_tmp = os.open("/tmp", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        _check(_libc.mount(b"tmpfs", b"/tmp", b"tmpfs", 0, b"mode=1777"), "mount /tmp")
        for folder in keep:
            os.makedirs(folder, exist_ok=True)
            source = f"/proc/self/fd/{host_tmp}/{os.path.relpath(folder, '/tmp')}".encode()
            target = folder.encode()
            _check(_libc.mount(source, target, None, MS_BIND | MS_REC, None), f"mount {folder}")
            flags = MS_REMOUNT | MS_BIND | MS_RDONLY
            _check(_libc.mount(None, target, None, flags, None), f"make {folder} read-only")
    finally:
        os.close(host_tmp)
    os.chdir("/")


def _read_font_list(settings: dict) -> tuple:
    """The font list's name and content, read before the private /tmp may hide it (a cache in /tmp)."""
    font_list = settings.get("font_list")
    if not font_list:
        return None, b""
    with open(font_list, "rb") as source:
        return os.path.basename(font_list), source.read()


def _prepare(settings: dict, font_list: tuple, failed: dict) -> list:
    name, content = font_list
    folder = os.environ.get("MPLCONFIGDIR")
    if name and folder:  # as the kernel seeds its own (see font_cache.py)
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, name), "wb") as f:
            f.write(content)
    preloaded: list = []
    for module in settings.get("preload", []):
        _load(module, preloaded, failed)
    _freeze()
    return preloaded


def _load(name: str, preloaded: list, failed: dict) -> None:
    gc.disable()  # what an import makes lives as long as the template: passes over it would free nothing
    try:
        importlib.import_module(name)
        preloaded.append(name)
    except Exception as exc:  # not installed, or broken here: the kernels import it themselves (said)
        failed[name] = f"{type(exc).__name__}: {exc}"
    finally:
        gc.enable()  # as in any Python, for the kernels forked from here


def _freeze() -> None:
    gc.collect()
    gc.freeze()  # keep the imported objects' pages shared with the forks


def _become_kernel(fds: list, setup: dict) -> None:
    """In the sample's namespaces: take the sandbox's shape, then run the kernel (never returns)."""
    stdin, stdout, stderr = fds
    os.setsid()
    for target, source in enumerate((stdin, stdout, stderr)):
        os.dup2(source, target)
    os.closerange(3, os.sysconf("SC_OPEN_MAX"))
    for number in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP):
        signal.signal(number, signal.SIG_DFL)
    _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    for capability in range(64):
        if _libc.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
            break  # past the last capability this kernel knows
    os.environ.clear()
    os.environ.update(setup["env"])
    os.chdir(setup["cwd"])
    import random

    random.seed()
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed()
    sys.path.insert(0, setup["folder"])
    entry = importlib.import_module(setup["module"])
    sys.path.remove(setup["folder"])
    entry.main(setup["config"])


def _waiter(header: dict, fds: list) -> None:
    """The request's fork: join the sample, fork its kernel, report how the kernel ended."""
    namespaces, (stdin, stdout, stderr, status, setup_fd) = fds[:NAMESPACES], fds[NAMESPACES:]
    for folder in header["cgroups"]:
        with open(os.path.join(folder, "cgroup.procs"), "w") as procs:
            procs.write(str(os.getpid()))
    for fd in namespaces:
        _check(_libc.setns(fd, 0), "setns")
        os.close(fd)
    with os.fdopen(setup_fd, encoding="utf-8") as source:
        setup = json.load(source)
    kernel = os.fork()  # the first process that is inside the sample's PID namespace
    if kernel == 0:
        os.close(status)
        _become_kernel([stdin, stdout, stderr], setup)
        os._exit(0)
    for fd in (stdin, stdout, stderr):
        os.close(fd)
    # the waiter stays root, so that it counts against no limit of the sample's user id; the sample's
    # processes cannot reach it (another user, and outside their PID namespace)
    _, wait_status = os.waitpid(kernel, 0)
    os.write(status, struct.pack("i", wait_status))


def _serve(channel: socket.socket, later: list, preloaded: list, failed: dict) -> None:
    while True:
        if later and not select.select([channel], [], [], _IDLE_S)[0]:
            # once no request came for a while (a burst of starts is over), and at the lowest priority,
            # so that the samples running meanwhile keep the CPU; forks happen at the usual one
            usual = os.getpriority(os.PRIO_PROCESS, 0)
            os.setpriority(os.PRIO_PROCESS, 0, 19)
            try:
                _load(later.pop(0), preloaded, failed)
            finally:
                os.setpriority(os.PRIO_PROCESS, 0, usual)
            if not later:
                _freeze()
            continue
        try:
            message, fds, _, _ = socket.recv_fds(channel, 65536, NAMESPACES + 5)
        except InterruptedError:
            continue
        if not message:
            return
        try:
            header = json.loads(message)
            if "later" in header:  # a template started early: its process now runs more sandboxes
                later.extend(name for name in header["later"] if name not in preloaded and name not in later)
                for fd in fds:
                    os.close(fd)
                continue
            if header.get("load_all"):
                while later:
                    _load(later.pop(0), preloaded, failed)
                _freeze()
                channel.send(json.dumps({"preloaded": preloaded, "failed": failed}).encode())
                for fd in fds:
                    os.close(fd)
                continue
            if len(fds) != NAMESPACES + 5:
                raise ValueError(f"{len(fds)} descriptors")
            pid = os.fork()
            if pid == 0:
                code = 1
                try:
                    signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # the waiter waits for its kernel itself
                    channel.close()
                    _waiter(header, fds)
                    code = 0
                except BaseException as exc:  # say why on the kernel's error pipe, which the host reads
                    os.write(fds[NAMESPACES + 2], f"the kernel template could not start it: {exc}\n".encode())
                finally:
                    os._exit(code)
            reply = {"pid": pid}
        except Exception as exc:
            reply = {"error": str(exc)}
        for fd in fds:
            os.close(fd)
        channel.send(json.dumps(reply).encode())


def _reap(*_: object) -> None:
    """Collect the waiters that are done, and kernels orphaned by their waiter's death (on SIGCHLD: none
    stays a zombie until the next request)."""
    while True:
        try:
            if os.waitpid(-1, os.WNOHANG)[0] == 0:
                return
        except ChildProcessError:
            return


def main() -> None:
    # no parent-death signal: it would fire when the harness *thread* that started it ends; the template
    # ends instead when the harness's end of the socket closes (the harness exited or was killed)
    channel = socket.socket(fileno=int(sys.argv[2]))
    settings = json.loads(channel.recv(65536))
    font_list = _read_font_list(settings)
    _private_tmp(_python_folders_in_tmp())
    failed: dict = {}  # module -> why it could not be imported, said to the harness
    preloaded = _prepare(settings, font_list, failed)
    # A sample's kernel outlives its waiter when both are killed at its end: orphaned, it comes here
    # rather than to PID 1, which may reap late or never (a container's), while its PID namespace's
    # first process waits for it to be reaped before it can exit. `_reap` collects it.
    _check(_libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), "child subreaper")
    signal.signal(signal.SIGCHLD, _reap)
    channel.send(json.dumps({"ready": True, "preloaded": preloaded, "failed": failed}).encode())
    _serve(channel, list(settings.get("later", [])), preloaded, failed)


main()
