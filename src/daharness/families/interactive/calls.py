"""The host side of the private-call recorder (AccR): starting it in a record sandbox, and reading back
the record it seals.

The recorder (``recorder.py``) runs in the sandbox's kernel, beside the answer's code; each
record run gets a key of its own, sent with the code that starts the recorder, before the answer runs.
After the answer, a step asks the recorder for its record with a fresh nonce; the recorder prints one
line holding the calls, the tampering it saw and the nonce, with an HMAC-SHA256 under the key. A line
without the nonce or a valid code is not the recorder's and is ignored; no valid line at all means the
answer's code got in the way (it replaced ``sys.audit``, ``print`` or the standard output), which is
tampering too.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass, field
from pathlib import Path

from daharness.core.backend import SandboxBackend
from daharness.families.interactive.recorder import SEAL_EVENT

RECORDER_SOURCE = Path(__file__).with_name("recorder.py").read_text(encoding="utf-8")
_SEALED = re.compile(r"calls=([\w,]*);tampering=([^;\n]*);nonce=([0-9a-f]+) ([0-9a-f]{64})")
NO_SEAL = "left no sealed record of its private-library calls (it replaced what reports it)"


@dataclass(frozen=True)
class PrivateCalls:
    """Library functions the code ran (each proved by a frame of its own code) and the tampering seen."""

    calls: list[str] = field(default_factory=list)
    tampering: list[str] = field(default_factory=list)


class CallRecorder:
    """One record run's recorder: the code that starts it, and its sealed record."""

    def __init__(self, library: str, functions: list[str]) -> None:
        self.library, self.functions = library, sorted(functions)
        self._key = secrets.token_bytes(32)

    def start_code(self) -> str:
        """Python for the record sandbox's kernel, run after the history and before the answer."""
        return (
            "import types as _t\n"
            "_r = _t.ModuleType('_recorder')\n"
            f"exec(compile({RECORDER_SOURCE!r}, '<recorder>', 'exec'), _r.__dict__)\n"
            f"_r.install({self.library!r}, {self.functions!r}, {self._key.hex()!r})\n"
            "del _t, _r\n"
        )

    def read(self, box: SandboxBackend) -> PrivateCalls:
        """Ask the recorder for its record (before any intent is evaluated) and check its seal."""
        nonce = secrets.token_hex(16)
        observation = box.python(
            f"_sealed = []\n__import__('sys').audit({SEAL_EVENT!r}, {nonce!r}, _sealed)\n"
            "print(*_sealed, sep='\\n')\ndel _sealed\n"
        )
        return self.verify(observation.stdout, nonce)

    def verify(self, text: str, nonce: str) -> PrivateCalls:
        """The calls and tampering of every line of `text` sealed with this run's key and `nonce`."""
        calls: set[str] = set()
        tampering: list[str] = []
        sealed = False
        for match in _SEALED.finditer(text):
            body = match.group(0).rsplit(" ", 1)[0]
            expected = hmac.new(self._key, body.encode(), hashlib.sha256).hexdigest()
            if match.group(3) != nonce or not hmac.compare_digest(expected, match.group(4)):
                continue
            sealed = True
            calls.update(name for name in match.group(1).split(",") if name)
            tampering += [
                reason for reason in match.group(2).split("|") if reason and reason not in tampering
            ]
        if not sealed:
            return PrivateCalls([], [NO_SEAL])
        return PrivateCalls(sorted(calls), tampering)
