"""`computed_once`: a value that a burst of concurrent first calls asks for is computed once."""

from __future__ import annotations

import sys
import threading

from helpers import wait_until

from daharness.sandbox.once import computed_once


def _waiting_in(thread: threading.Thread, names: set[str]) -> bool:
    """Whether `thread` is blocked in one of the functions `names` (its innermost frames)."""
    frame = sys._current_frames().get(thread.ident or -1)
    while frame is not None:
        if frame.f_code.co_name in names:
            return True
        frame = frame.f_back
    return False


def test_concurrent_first_calls_compute_once() -> None:
    entered: list[str] = []
    release = threading.Event()

    @computed_once
    def masks(key: str) -> list[str]:
        entered.append(key)
        release.wait(30)
        return [key]

    results: list[list[str]] = []
    first = threading.Thread(target=lambda: results.append(masks("site")))
    first.start()
    wait_until(lambda: entered == ["site"], what="the first call to compute")
    second = threading.Thread(target=lambda: results.append(masks("site")))
    second.start()
    # the second call is held back (at the lock) or, were it a plain cache, computing beside the first
    wait_until(
        lambda: _waiting_in(second, {"wrapper", "masks"}) or not second.is_alive(), what="the second call"
    )
    release.set()
    first.join(30)
    second.join(30)
    assert entered == ["site"] and results == [["site"], ["site"]]
    assert results[0] is results[1]  # the same cached value
