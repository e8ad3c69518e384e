"""Capture of a step's stdout and stderr: each pipe drained by a thread, head and tail kept."""

from __future__ import annotations

import os
import threading
import uuid

SENTINEL = f"\x00daharness-step-{uuid.uuid4().hex}\x00".encode()


class CappedStream:
    """Drains one pipe in a thread; keeps the first and last `cap // 2` bytes of each step."""

    def __init__(self, read_fd: int, cap: int) -> None:
        self.read_fd, self.half = read_fd, max(cap // 2, 1)
        self.lock = threading.Lock()
        self.marker_seen = threading.Event()
        self._reset()
        threading.Thread(target=self._drain, daemon=True).start()

    def _reset(self) -> None:
        self.head, self.tail, self.total = bytearray(), bytearray(), 0

    def _keep(self, data: bytes) -> None:
        self.total += len(data)
        room = self.half - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            if len(self.tail) > self.half:
                del self.tail[: len(self.tail) - self.half]

    def _drain(self) -> None:
        carry = b""
        while chunk := os.read(self.read_fd, 1 << 16):
            data = carry + chunk
            while (index := data.find(SENTINEL)) >= 0:
                with self.lock:
                    self._keep(data[:index])
                self.marker_seen.set()
                data = data[index + len(SENTINEL) :]
            keep = len(SENTINEL) - 1  # a marker may be split across reads
            with self.lock:
                self._keep(data[:-keep] if len(data) > keep else b"")
            carry = data[-keep:] if len(data) > keep else data

    def take(self) -> tuple[str, int]:
        """The step's text (head, cut notice, tail) and how many bytes were cut."""
        with self.lock:
            cut = self.total - len(self.head) - len(self.tail)
            text = self.head.decode("utf-8", "replace")
            if cut > 0:
                text += f"\n[... {cut:,} bytes of output cut ...]\n"
            text += self.tail.decode("utf-8", "replace")
            self._reset()
        return text, max(cut, 0)

    def end_step(self, fd: int) -> None:
        """Mark the end of a step in the pipe; `take` is complete once `marker_seen` is set."""
        self.marker_seen.clear()
        os.write(fd, SENTINEL)
