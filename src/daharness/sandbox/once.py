"""`computed_once`: functools.cache for what sandbox launches compute, whose concurrent first calls
(a burst of samples starting at once) compute a value once instead of once per thread."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


def computed_once(function: Callable[P, R]) -> Callable[P, R]:
    cached = functools.cache(function)
    lock = threading.RLock()  # reentrant: a cached function may call another of the same kind

    @functools.wraps(function)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with lock:
            return cached(*args, **kwargs)

    return wrapper
