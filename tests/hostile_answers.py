"""Answers a hostile agent gives, shared by the security tests and benchmarks/hostile_artifacts.py."""

# Python that leaves dabench/result.npy as an object array which, unpickled, runs `id > {marker}`
PICKLED_NPY = """
import os
import numpy as np

class Payload:
    def __reduce__(self):
        return (os.system, ("id > {marker}",))

array = np.empty(1, dtype=object)
array[0] = Payload()
os.makedirs("dabench", exist_ok=True)
np.save("dabench/result.npy", array, allow_pickle=True)
"""

# the right answer to the interactive suite's affairs-01
AFFAIRS = (
    "import pandas as pd\n\n"
    'affairs = pd.read_csv("fair_affairs.csv")\n'
    'affairs["had_affair"] = affairs["affairs"] > 0\n'
    'affair_rate = affairs["had_affair"].mean()\n'
)
# the right answer, then a patched open() that pads the probe's results file to about 100 MB
RESULTS_OF_100_MB = (
    AFFAIRS
    + """
import builtins, io, json
_open = builtins.open
class _Padded(io.StringIO):
    def __init__(self, path):
        super().__init__()
        self.path = path
    def __enter__(self):
        return self
    def __exit__(self, *exc):
        record = json.loads(self.getvalue())
        record["pad"] = [0] * 33_400_000
        with _open(self.path, "w") as out:
            out.write(json.dumps(record))
def _patched(path, mode="r", *args, **kwargs):
    if "w" in mode and ".daharness-results-" in str(path):
        return _Padded(path)
    return _open(path, mode, *args, **kwargs)
builtins.open = _patched
"""
)
