"""Model replies kept in SQLite, keyed on the hash of the whole request."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from pathlib import Path

from daharness.core.errors import located

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, value TEXT NOT NULL, created REAL NOT NULL)"
)


class ResponseCache:
    """One connection behind a lock: SQLite calls are short, and WAL lets other processes (parallel runs
    sharing the default file) read while one writes."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # autocommit: every put is durable at once, a crash loses nothing already paid for
            self._db = sqlite3.connect(self.path, timeout=30, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(_SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise located(self.path, f"cannot open the response cache: {exc}") from None

    def get(self, key: str) -> dict | None:
        with self._lock:
            row = self._db.execute("SELECT value FROM responses WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: str, value: dict) -> None:
        text = json.dumps(value, ensure_ascii=False)
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO responses (key, value, created) VALUES (?, ?, ?)",
                (key, text, time.time()),
            )

    def stored(self, model: str, base_url: str | None, epochs: int) -> int:
        """How many replies of `model` at `base_url` for epochs 1 to `epochs` are kept. A reply kept before
        the cache noted its endpoint and epoch counts by its model alone, as one of epoch 1."""
        query = (
            "SELECT COUNT(*) FROM responses WHERE json_extract(value, '$.model') = ? "
            "AND (json_type(value, '$.base_url') IS NULL OR json_extract(value, '$.base_url') IS ?) "
            "AND coalesce(json_extract(value, '$.epoch'), 1) <= ?"
        )
        with self._lock:
            return int(self._db.execute(query, (model, base_url, epochs)).fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
