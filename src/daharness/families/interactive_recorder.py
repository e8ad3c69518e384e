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
* Its state (the proofs, the tampering seen, the host's key) lives in one object put among its code's
  constants after compiling (the ``"@state"`` placeholder). It reads no global name (its globals hold
  nothing) and binds no state to a local variable, so a frame of it, which a signal handler or a
  finaliser running inside it may see, shows nothing but the event at hand; no exception leaves it.
* A guard hook refuses what could reach the recorder or change its frames: the garbage collector's
  object lists, other threads' frames, profile and trace functions (they may rewrite a frame's locals),
  more audit hooks, the code of the recorder's frames or function, and opening a process's memory file
  (``/proc/<pid>/mem``). The refusal is a PermissionError raised from the guard, whose state holds
  nothing secret, after the recorder noted it.
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

# Each name the hooks use is an attribute of the "@state" constant, builtins included.
_RECORDER = """
def recorder(event, args):
    try:
        if event == CALL_EVENT:
            frame = "@state".getframe(1)
            code = frame.f_code
            if "@state".codes.get(code) is not code or code in "@state".proofs:
                return
            caller = frame.f_back
            if caller is not None:
                for scope in "@state".scopes:
                    if caller.f_globals is scope:
                        return  # one library function calling another
            "@state".proofs[code] = frame
        elif event == TAMPER_EVENT:
            reason = args[0]
            if "@state".type(reason) is not "@state".str:
                return
            reason = reason.replace(";", ",").replace("|", "/")[:200]
            if reason not in "@state".tampering and "@state".len("@state".tampering) < MAX_TAMPERING:
                "@state".tampering.append(reason)
        elif event == SEAL_EVENT:
            nonce = args[0]
            out = args[1]
            if "@state".type(nonce) is not "@state".str or "@state".type(out) is not "@state".list:
                return
            names = ()
            for code in "@state".proofs:
                frame = "@state".proofs[code]
                if "@state".type(frame) is "@state".FrameType and frame.f_code is code:
                    if "@state".codes.get(code) is code:
                        names = names + ("@state".names[code],)
            text = "calls=" + ",".join("@state".sorted(names))
            text = text + ";tampering=" + "|".join("@state".tampering) + ";nonce=" + nonce
            out.append(text + " " + "@state".hmac("@state".key, text.encode(), "sha256").hex())
    except:  # noqa: E722 - nothing may leave the recorder, not even a timeout (its frame would)
        pass
"""

_GUARD = """
def memory_file(path):
    try:
        if "@state".type(path) is "@state".int:
            return None
        path = "@state".fspath(path)
        if "@state".type(path) is not "@state".str:
            path = "@state".bytes_concat(b"", path).decode("utf-8", "surrogateescape")
        path = "@state".str_concat("", path)
        if path.rstrip("/").rsplit("/", 1)[-1] == "mem":
            return "opened a process's memory file (" + path[:100] + ")"
        found = "@state".stat(path)
        if found.st_dev == "@state".proc_device and found.st_mode & 0o777 == 0o600:
            return "opened a process's memory file (" + path[:100] + ")"
    except "@state".Exception:
        return None
    return None


def guard(event, args):
    if event == CALL_EVENT:
        return
    reason = "@state".refused.get(event)
    if reason is None:
        if event == "object.__getattr__":
            target = args[0]
            if args[1] == "f_code" and "@state".type(target) is "@state".FrameType:
                if target.f_globals is "@state".recorder_globals:
                    reason = "read the code of the call recorder"
            if args[1] == "__code__" and "@state".type(target) is "@state".FunctionType:
                if target.__globals__ is "@state".recorder_globals:
                    reason = "read the code of the call recorder"
        elif event == "open":
            reason = "@state".memory_file(args[0])
    if reason is not None:
        "@state".audit(TAMPER_EVENT, reason)
        raise "@state".PermissionError("refused while private-library calls are recorded: the code " + reason)
"""


def _source(text: str) -> str:
    for name, value in (
        ("CALL_EVENT", CALL_EVENT),
        ("TAMPER_EVENT", TAMPER_EVENT),
        ("SEAL_EVENT", SEAL_EVENT),
    ):
        text = text.replace(name, repr(value))
    return text.replace("MAX_TAMPERING", str(MAX_TAMPERING))


def compile_hooks(source: str, state: Any) -> dict[str, types.FunctionType]:
    """The functions of `source`, with `state` in place of the "@state" placeholder, in empty globals of
    their own (`state.globals`)."""
    module = compile(_source(source), "<recorder>", "exec")
    scope: dict[str, Any] = {"__builtins__": {}}
    made = {}
    for const in module.co_consts:
        if isinstance(const, types.CodeType):
            consts = tuple(state if item == "@state" else item for item in const.co_consts)
            made[const.co_name] = types.FunctionType(const.replace(co_consts=consts), scope)
    state.globals = scope
    return made


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
    secret = types.SimpleNamespace(
        type=type, len=len, sorted=sorted, str=str, list=list, FrameType=types.FrameType,
        getframe=sys._getframe, hmac=_hashlib.hmac_digest, key=bytes.fromhex(key_hex),
        codes=codes, names=names, scopes=scopes, proofs={}, tampering=[],
    )  # fmt: skip
    recorder = compile_hooks(_RECORDER, secret)["recorder"]
    public = types.SimpleNamespace(
        type=type, int=int, str=str, Exception=Exception, PermissionError=PermissionError,
        FrameType=types.FrameType, FunctionType=types.FunctionType, refused=dict(REFUSED),
        recorder_globals=secret.globals, audit=sys.audit, fspath=os.fspath, stat=os.stat,
        proc_device=os.stat("/proc").st_dev, str_concat=str.__add__, bytes_concat=bytes.__add__,
    )  # fmt: skip
    guard = compile_hooks(_GUARD, public)
    public.memory_file = guard["memory_file"]
    _not_dumpable()
    sys.addaudithook(recorder)
    sys.addaudithook(guard["guard"])
