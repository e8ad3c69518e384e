"""Runs INSIDE the sandbox, where daharness cannot be imported: records which functions of the task's
private library the answer's code really ran (AccR), where that code cannot reach the record.

The answer's code runs in the very process that is recorded, so the recorder leaves it nothing to hold:

* Each listed library function gets its own code back compiled with one more first statement,
  ``sys.audit(CALL_EVENT)`` (its ``__code__`` is replaced in place, so names imported before are covered).
* The recorder is an audit hook; Python has no way to list or remove one. On that event it takes the
  frame that raised it: the call counts only when that frame, which Python code cannot make, runs one of
  those very code objects, called from outside the library. Dead code, a look-alike function, code
  exec'd under the library's name or an event raised by other code is no call. The frame is kept as the
  call's proof and checked again when the record is sealed.
* Its state (the proofs, the tampering seen, the host's key) lives in one tuple put among its code's
  constants after compiling (the ``"@state"`` placeholder). It reads no global name (its globals hold
  nothing) and binds no state to a local variable, so a frame of it, which a signal handler or a
  finaliser running inside it may see, shows nothing but the event at hand; no exception leaves it.
* A guard hook refuses what could reach the recorder or change its frames: the garbage collector's
  object lists, other threads' frames, profile and trace functions (they may rewrite a frame's locals),
  more audit hooks, the code of the recorder's frames or function, and opening a process's memory file
  (``/proc/<pid>/mem``). The refusal is a PermissionError raised from the guard after the recorder noted
  it; the guard's state, which a traceback then shows, holds nothing secret and cannot be changed.
* ``sys.audit(SEAL_EVENT, nonce, out)`` appends one line to the list ``out``: the calls, the tampering
  seen and the nonce, with an HMAC-SHA256 under the host's key. The host accepts only a line with its
  nonce and a valid code, so a record written by anything else, or rewritten later, does not count.

What stays possible is reading or writing the process's memory through native code that raises no
audit event (ctypes pointers, numpy's array interface over a raw address): see
docs/scoring-integrity.md.
"""

from __future__ import annotations

import ast
import importlib
import os
import re
import sys
import types
from typing import Any

CALL_EVENT = "daharness.recorder.call"
SEAL_EVENT = "daharness.recorder.seal"
TAMPER_EVENT = "daharness.recorder.tampering"
MAX_TAMPERING = 20

REFUSED = {
    "gc.get_objects": "asked the garbage collector for its objects",
    "gc.get_referrers": "asked the garbage collector for an object's referrers",
    "gc.get_referents": "asked the garbage collector for an object's referents",
    "sys._current_frames": "read the frames of every thread",
    "sys._current_exceptions": "read the exceptions of every thread",
    "sys.setprofile": "set a profile function",
    "sys.settrace": "set a trace function",
    "sys.addaudithook": "added an audit hook",
}

# The hooks. `S.name` is an entry of their state, a tuple put among their code's constants after
# compiling (`compile_hooks`): the only thing they look up, builtins included.
_RECORDER = """
def recorder(event, args):
    try:
        if event == CALL_EVENT:
            frame = S.getframe(1)
            code = frame.f_code
            if S.codes.get(code) is not code or code in S.proofs:
                return
            caller = frame.f_back
            if caller is not None:
                for scope in S.scopes:
                    if caller.f_globals is scope:
                        return  # one library function calling another
            S.proofs[code] = frame
        elif event == TAMPER_EVENT:
            reason = args[0]
            if S.type(reason) is not S.str:
                return
            reason = reason.replace(";", ",").replace("|", "/")[:200]
            if reason not in S.tampering and S.len(S.tampering) < MAX_TAMPERING:
                S.tampering.append(reason)
        elif event == SEAL_EVENT:
            nonce = args[0]
            out = args[1]
            if S.type(nonce) is not S.str or S.type(out) is not S.list:
                return
            names = ()
            for code in S.proofs:
                frame = S.proofs[code]
                if S.type(frame) is S.FrameType and frame.f_code is code and S.codes.get(code) is code:
                    names = names + (S.names[code],)
            text = "calls=" + ",".join(S.sorted(names)) + ";tampering=" + "|".join(S.tampering)
            text = text + ";nonce=" + nonce
            out.append(text + " " + S.hmac(S.key, text.encode(), "sha256").hex())
    except:  # noqa: E722 - nothing may leave the recorder, not even a timeout (its frame would)
        pass
"""

# The guard's state holds nothing secret and cannot be changed (a tuple, its table a read-only mapping):
# its frames reach tracebacks (it raises), and so may its code.
_GUARD = """
def guard(event, args):
    if event == CALL_EVENT:
        return
    reason = S.refused.get(event)
    if reason is None and event == "object.__getattr__":
        target = args[0]
        if args[1] == "f_code" and S.type(target) is S.FrameType and target.f_globals is S.recorder:
            reason = "read the code of the call recorder"
        if args[1] == "__code__" and S.type(target) is S.FunctionType and target.__globals__ is S.recorder:
            reason = "read the code of the call recorder"
    if reason is None and event == "open" and S.type(args[0]) is not S.int:
        try:
            path = S.fspath(args[0])
            if S.type(path) is not S.str:
                path = S.bytes_concat(b"", path).decode("utf-8", "surrogateescape")
            path = S.str_concat("", path)  # a str, whatever str subclass came in
            if path.rstrip("/").rsplit("/", 1)[-1] == "mem":
                reason = "opened a process's memory file (" + path[:100] + ")"
            else:
                found = S.stat(path)
                if found.st_dev == S.proc_device and found.st_mode & 0o777 == 0o600:
                    reason = "opened a process's memory file (" + path[:100] + ")"
        except S.Exception:
            pass
    if reason is not None:
        S.audit(TAMPER_EVENT, reason)
        raise S.PermissionError("refused while private-library calls are recorded: the code " + reason)
"""


def compile_hooks(source: str, state: dict[str, Any]) -> tuple[dict[str, types.FunctionType], dict[str, Any]]:
    """The functions of `source`, in empty globals of their own, and those globals. Each `S.name` in the
    source reads entry `name` of `state`, kept as a tuple (which nothing can change) among the code's
    constants in place of the "@state" placeholder."""
    names = list(state)
    text = re.sub(r"\bS\.(\w+)", lambda match: f'"@state".__getitem__({names.index(match.group(1))})', source)
    for name, value in (
        ("CALL_EVENT", CALL_EVENT),
        ("TAMPER_EVENT", TAMPER_EVENT),
        ("SEAL_EVENT", SEAL_EVENT),
    ):
        text = text.replace(name, repr(value))
    module = compile(text.replace("MAX_TAMPERING", str(MAX_TAMPERING)), "<recorder>", "exec")
    values = tuple(state.values())
    scope: dict[str, Any] = {"__builtins__": {}}
    made = {}
    for const in module.co_consts:
        if isinstance(const, types.CodeType):
            consts = tuple(values if item == "@state" else item for item in const.co_consts)
            made[const.co_name] = types.FunctionType(const.replace(co_consts=consts), scope)
    return made, scope


def _announcing(function: types.FunctionType) -> types.CodeType | None:
    """`function`'s code compiled again from its source with `sys.audit(CALL_EVENT)` as its first statement
    (after the docstring); None when its source cannot be read."""
    code = function.__code__
    try:
        with open(code.co_filename, encoding="utf-8") as handle:
            tree = ast.parse(handle.read(), code.co_filename)
    except (OSError, SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef) or node.name != code.co_name:
            continue
        if (
            min([node.lineno, *(decorator.lineno for decorator in node.decorator_list)])
            != code.co_firstlineno
        ):
            continue
        first = node.body[0]
        docstring = isinstance(first, ast.Expr) and isinstance(getattr(first.value, "value", None), str)
        announce = ast.parse(f"__import__('sys').audit({CALL_EVENT!r})").body[0]
        ast.copy_location(announce, node.body[1] if docstring and len(node.body) > 1 else first)
        node.body.insert(1 if docstring else 0, ast.fix_missing_locations(announce))
    module = compile(tree, code.co_filename, "exec")
    pending = list(module.co_consts)
    while pending:
        const = pending.pop()
        if isinstance(const, types.CodeType):
            same = (const.co_qualname, const.co_firstlineno, const.co_freevars)
            if same == (code.co_qualname, code.co_firstlineno, code.co_freevars):
                return const
            pending += const.co_consts
    return None


def _announce_calls(
    library: str, functions: list[str]
) -> tuple[dict[Any, Any], dict[Any, str], tuple[Any, ...]]:
    """Make each listed function of `library` announce its calls; their codes, names and globals."""
    module = importlib.import_module(library)
    codes: dict[Any, Any] = {}
    names: dict[Any, str] = {}
    scopes: list[dict[str, Any]] = []
    for name in functions:
        function = getattr(module, name, None)
        if not isinstance(function, types.FunctionType):
            continue
        announcing = _announcing(function)
        if announcing is None:
            continue
        function.__code__ = announcing
        codes[announcing] = announcing
        names[announcing] = name
        if not any(function.__globals__ is scope for scope in scopes):
            scopes.append(function.__globals__)
    return codes, names, tuple(scopes)


def _not_dumpable() -> None:
    """Keep other processes of the same user (the answer's children) out of this one's memory."""
    try:
        import ctypes

        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE, 0
    except Exception:  # no libc prctl: a child of the same user may still read /proc/<pid>/mem
        pass


def install(library: str, functions: list[str], key_hex: str) -> None:
    """Record, from now on, which of `library`'s `functions` run; the record is sealed with `key_hex`."""
    import _hashlib

    codes, names, scopes = _announce_calls(library, functions)
    made, recorder_scope = compile_hooks(_RECORDER, {
        "type": type, "len": len, "sorted": sorted, "str": str, "list": list, "FrameType": types.FrameType,
        "getframe": sys._getframe, "hmac": _hashlib.hmac_digest, "key": bytes.fromhex(key_hex),
        "codes": codes, "names": names, "scopes": scopes, "proofs": {}, "tampering": [],
    })  # fmt: skip
    guard, _ = compile_hooks(_GUARD, {
        "type": type, "int": int, "str": str, "Exception": Exception, "PermissionError": PermissionError,
        "FrameType": types.FrameType, "FunctionType": types.FunctionType,
        "refused": types.MappingProxyType(dict(REFUSED)), "recorder": recorder_scope, "audit": sys.audit,
        "fspath": os.fspath, "stat": os.stat, "proc_device": os.stat("/proc").st_dev,
        "str_concat": str.__add__, "bytes_concat": bytes.__add__,
    })  # fmt: skip
    _not_dumpable()
    sys.addaudithook(made["recorder"])
    sys.addaudithook(guard["guard"])
