"""Where the test suite's CPU goes, by program: runs pytest (the README's command, with any arguments given)
under the kernel's process accounting and prints the CPU-seconds of each kind of program (dbt, Dagster,
Chromium, sandbox kernels, scoring workers...) and how many processes of each ended.

Process accounting (acct(2), so: as root) makes the kernel write a record for every process that ends,
with the CPU it used, including the sandboxes' processes in their own namespaces and those that lived
a few milliseconds. A record names only the program's first 16 characters ("python"), so a thread here
reads every process's command line from /proc every 0.2 s, and each record takes the line seen for its
pid and start time. Processes still running when pytest ends are not counted (the sum is a little below
what the machine's CPU counters say). `suite_cpu.py` splits the same CPU by test instead.

Run: python benchmarks/suite_processes.py [PYTEST ARGS...]    e.g. tests/families/workflow, or nothing
"""

from __future__ import annotations

import ctypes
import os
import re
import struct
import subprocess
import sys
import tempfile
import threading
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from suite_cpu import print_largest  # this folder is the script's first import path

HERE = Path(__file__).resolve().parent
# the first pattern a command line matches names its kind (order matters: an application's own Python
# processes before the generic ones)
KINDS = [
    ("dbt", r"/dbt\b"),
    ("Dagster", r"dagster"),
    ("Airflow (and astro)", r"airflow|astro\b"),
    ("Superset", r"superset"),
    ("PostgreSQL", r"postgres|postmaster|psql"),
    ("MariaDB", r"mariadb|mysqld"),
    ("Chromium", r"chrom"),
    ("JupyterLab and Jupyter kernels", r"jupyter|ipykernel"),
    ("LibreOffice", r"soffice|libreoffice"),
    ("Xvfb, openbox, AT-SPI, D-Bus", r"Xvfb|openbox|at-spi|dbus"),
    ("Ray", r"\bray\b|raylet|gcs_server"),
    ("the kernel template and its forked kernels", r"daharness-template|source = int\(sys\.argv\[1\]\)"),
    ("kernels started by bubblewrap", r"daharness_kernel"),
    ("the desktop's helper in the sandbox", r"daharness_desktop"),
    ("scoring workers", r"score_worker|import runpy"),
    ("daharness commands", r"-m daharness\b|bin/daharness\b"),
    ("pytest and its workers", r"pytest|exec\(eval\(sys\.stdin"),
    ("bubblewrap", r"bwrap"),
]
_RECORD = struct.Struct("=BBHIIIIIIf8H16s")  # struct acct_v3 (linux/acct.h)
_TICKS_PER_S = 100  # AHZ: the unit of the records' times


@dataclass
class Record:
    program: str  # the first 16 characters the kernel keeps
    pid: int
    started: int  # seconds since the epoch
    cpu_s: float


def _comp(value: int) -> int:
    """A comp_t: 13 bits of mantissa, 3 bits of base-8 exponent."""
    return (value & 0x1FFF) << (3 * (value >> 13))


def read_records(path: Path) -> list[Record]:
    data = path.read_bytes()
    records = []
    for offset in range(0, len(data) - _RECORD.size + 1, _RECORD.size):
        fields = _RECORD.unpack_from(data, offset)
        if fields[1] != 3:  # ac_version
            raise SystemExit(f"{path}: not a version 3 accounting record at byte {offset}")
        pid, started, utime, stime, comm = fields[6], fields[8], fields[10], fields[11], fields[18]
        cpu_s = (_comp(utime) + _comp(stime)) / _TICKS_PER_S
        records.append(Record(comm.split(b"\0", 1)[0].decode(errors="replace"), pid, started, cpu_s))
    return records


class CommandLines(threading.Thread):
    """The command line of every process seen, by (pid, start in seconds since the epoch)."""

    def __init__(self) -> None:
        super().__init__(daemon=True, name="command-lines")
        self.seen: dict[int, list[tuple[float, str]]] = {}
        self.done = threading.Event()
        self._ticks = os.sysconf("SC_CLK_TCK")
        with open("/proc/stat") as stat:
            self._boot = next(int(line.split()[1]) for line in stat if line.startswith("btime"))

    def run(self) -> None:
        while not self.done.wait(0.2):
            self.look()
        self.look()

    def look(self) -> None:
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                line = (
                    Path(f"/proc/{name}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                )
                stat = Path(f"/proc/{name}/stat").read_text()
            except OSError:
                continue
            if not line:
                continue
            started = self._boot + int(stat.rsplit(")", 1)[1].split()[19]) / self._ticks
            lines = self.seen.setdefault(int(name), [])
            if lines and abs(lines[-1][0] - started) < 1:
                lines[-1] = (started, line[:300])  # the same process: its latest line (after an exec)
            else:
                lines.append((started, line[:300]))

    def of(self, record: Record) -> str:
        near = [line for started, line in self.seen.get(record.pid, []) if abs(started - record.started) < 2]
        return near[-1] if near else ""


def kind_of(line: str, program: str) -> str:
    for kind, pattern in KINDS:
        if line and re.search(pattern, line):
            return kind
    return f"other: {program}"


def main() -> None:
    if os.geteuid() != 0:
        raise SystemExit("process accounting needs root (acct(2)); suite_cpu.py measures by test without it")
    libc = ctypes.CDLL(None, use_errno=True)
    with tempfile.TemporaryDirectory(prefix="daharness-suite-processes-") as folder:
        log = Path(folder) / "pacct"
        log.touch()
        lines = CommandLines()
        lines.start()
        if libc.acct(str(log).encode()) != 0:
            raise SystemExit(f"acct({log}) failed: {os.strerror(ctypes.get_errno())}")
        try:
            command = [sys.executable, "-m", "pytest", "-q", *sys.argv[1:]]
            subprocess.run(command, cwd=HERE.parent, check=False)  # its output as it comes
        finally:
            libc.acct(None)
            lines.done.set()
            lines.join()
        records = read_records(log)
    cpu: Counter[str] = Counter()
    count: Counter[str] = Counter()
    unnamed: Counter[str] = Counter()
    for record in records:
        line = lines.of(record)
        kind = kind_of(line, record.program)
        cpu[kind] += record.cpu_s
        count[kind] += 1
        if kind.startswith("other: python"):
            unnamed[re.sub(r"\s+", " ", line)[:110]] += record.cpu_s
    total = sum(cpu.values())
    print(f"\n{total:.0f} CPU-seconds in {len(records)} processes that ended")
    print(f"{'CPU-s':>8}  share  ended  kind")
    rest = [0.0, 0]
    for kind, seconds in cpu.most_common():
        if seconds >= total / 200:
            print(f"{seconds:8.1f}  {seconds / total:5.0%}  {count[kind]:5}  {kind}")
        else:
            rest[0] += seconds
            rest[1] += count[kind]
    print(f"{rest[0]:8.1f}  {rest[0] / total:5.0%}  {rest[1]:5}  the rest (each kind under 0.5 %)")
    print_largest("other Python processes, by command line:", unnamed)


if __name__ == "__main__":
    main()
