"""What the host does with hostile agent files while scoring (issue 19, items 2, 4 and 5), measured.

Each case runs the `daharness` command line in a child process, as a user would, and prints the score,
the exit code, the wall time and the peak memory of the harness process itself (its own
`getrusage(RUSAGE_SELF)` at exit: the sandboxes' and scoring workers' memory is not counted, as they are
limited on their own):

1. `score --dacode-...` (compat) of an output folder whose `dabench/result.npy` is an object array that
   unpickles into a command writing a marker file. Before: the command ran, as root (score 0, 261 MB).
   After: nothing runs, the sample scores 0 saying the file holds an object array (208 MB);
2. `run` of two DA-Code text tasks, one answered right and one with a JSON answer nested 950 deep.
   Before: the second was an infrastructure error and the mean read 100%. After: a 0 ("the score cannot
   be recorded: it is nested too deeply"), no error, the mean 50%;
3. `run` of an interactive turn answered right, plainly and with answer code that makes the results file
   about 100 MB. Before: both scored 1.0, and the harness peaked at 213 MB and 561 MB. After: the padded
   one scores 0 ("... takes 95.6 MB, more than the 32 MB read of it"), and the harness peaks at 213 MB
   in both.

Measured on the 2-core machine under a load of 12 to 17 (other runs), so the wall times vary by tens of
seconds between runs; the first sample that has files to score starts the confined scoring worker
(about 4 s of CPU for its imports, once per process).

Run: python benchmarks/hostile_artifacts.py [--only 1,3]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from hostile_answers import AFFAIRS, PICKLED_NPY, RESULTS_OF_100_MB

DACODE = Path(os.environ.get("DACODE_PUBLIC", "/work/shared/dacode-public"))
# the harness in a child: run the command line, then write its own peak RSS (KB) where asked
_MEASURED = (
    "import atexit, resource, sys\n"
    "peak = sys.argv.pop(1)\n"
    "atexit.register(lambda: open(peak, 'w').write(str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)))\n"
    "sys.argv[0] = 'daharness'\n"
    "from daharness.cli import main\n"
    "main()\n"
)


def harness(args: list[str], cwd: Path) -> dict[str, object]:
    """Run `daharness ARGS` in a child; its exit code, wall time and own peak RSS."""
    peak_file = cwd / "peak-rss-kb"
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _MEASURED, str(peak_file), *args], cwd=cwd, capture_output=True, text=True
    )
    seconds = time.perf_counter() - started
    peak = int(peak_file.read_text()) // 1024 if peak_file.is_file() else None
    return {
        "exit": done.returncode,
        "seconds": round(seconds, 1),
        "harness_peak_mb": peak,
        "stderr": done.stderr[-300:],
    }


def replayed(folder: Path, answers: dict[str, str]) -> Path:
    (folder / "trajectories").mkdir(parents=True)
    for task_id, answer in answers.items():
        saved = {"id": task_id, "agent": "hand-written", "answer": answer, "steps": []}
        (folder / "trajectories" / f"{task_id}.json").write_text(json.dumps(saved))
    return folder


def samples(run: Path) -> dict[str, dict[str, object]]:
    found = {}
    for line in (run / "samples.jsonl").read_text().splitlines():
        row = json.loads(line)
        score = row.get("score") or {}
        why = score.get("explanation") or row.get("error") or ""
        found[row["id"]] = {"status": row["status"], "score": score.get("value"), "why": why[:160]}
    return found


def pickled_result_npy(work: Path) -> None:
    outputs, marker = work / "outputs", work / "MARKER"
    folder = outputs / "plot-bar-004"
    (folder / "dabench").mkdir(parents=True)
    for name in ("result.png", "plot.json"):
        target = folder / name if name.endswith(".png") else folder / "dabench" / name
        target.write_bytes((DACODE / "gold" / "plot-bar-004" / name).read_bytes())
    with Image.open(folder / "result.png") as image:  # not the gold image: the data decides
        changed = image.convert("RGB")
    changed.putpixel((5, 5), (0, 0, 0))
    changed.save(folder / "result.png")
    answer = {"finished": True, "result": "result.png"}
    (folder / "dabench" / "result.json").write_text(json.dumps(answer))
    subprocess.run([sys.executable, "-c", PICKLED_NPY.format(marker=marker)], cwd=folder, check=True)
    for name in ("tasks", "eval"):
        rows = (DACODE / f"{name}.jsonl").read_text().splitlines()
        (work / f"{name}.jsonl").write_text("".join(r + "\n" for r in rows if '"plot-bar-004"' in r))
    figures = work / "figures.json"
    result = harness(
        ["score", "--dacode-tasks", "tasks.jsonl", "--dacode-eval", "eval.jsonl", "--gold", str(DACODE / "gold"),
         "--outputs", str(outputs), "--workspace-mode", "compat", "--json", str(figures)], work,
    )  # fmt: skip
    if figures.is_file():
        loaded = json.loads(figures.read_text())
        result["score"] = loaded["scores"]["plot-bar-004"]
        result["why"] = loaded["explanations"]["plot-bar-004"][:160]
    result["marker_written"] = marker.exists()
    print(json.dumps({"case": "1 pickled result.npy (score --dacode)", **result}), flush=True)


def nested_json_answer(work: Path) -> None:
    right = json.dumps({"highest country": ["Monaco"], "lowest country": ["Mongolia"]})
    bomb = "[" * 950 + "]" * 950
    source = replayed(work / "answers", {"di-text-001": right, "di-text-002": bomb})
    result = harness(
        ["run", "--suite", f"dacode:{DACODE}", "--agent", "replay", "--replay-from", str(source),
         "--ids", "di-text-001,di-text-002", "--out", "run"], work,
    )  # fmt: skip
    if (work / "run" / "report.json").is_file():
        report = json.loads((work / "run" / "report.json").read_text())
        result["headline"] = report.get("headline") or report.get("counts")
    if (work / "run" / "samples.jsonl").is_file():
        result["samples"] = samples(work / "run")
    print(json.dumps({"case": "2 right + 950-deep JSON answer (run)", **result}), flush=True)


def big_results_file(work: Path) -> None:
    for name, code in (("plain", AFFAIRS), ("100 MB results", RESULTS_OF_100_MB)):
        folder = work / name.replace(" ", "-")
        source = replayed(folder / "answers", {"affairs-01": f"```python\n{code}```"})
        result = harness(
            ["run", "--suite", "interactive", "--agent", "replay", "--replay-from", str(source),
             "--ids", "affairs-01", "--out", "run"], folder,
        )  # fmt: skip
        if (folder / "run" / "samples.jsonl").is_file():
            result["samples"] = samples(folder / "run")
        print(json.dumps({"case": f"3 interactive answer, {name} (run)", **result}), flush=True)


CASES = {1: pickled_result_npy, 2: nested_json_answer, 3: big_results_file}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", help="comma-separated case numbers")
    chosen = parser.parse_args().only
    for number, case in CASES.items():
        if chosen and str(number) not in chosen.split(","):
            continue
        with tempfile.TemporaryDirectory(prefix="daharness-hostile-") as work:
            case(Path(work))


if __name__ == "__main__":
    main()
