"""What a plain number looks like in an answer, a cell or a value: one definition shared by every scorer.

A sign, digits with at most one decimal point, and an optional exponent (`-3`, `.5`, `1.`, `2.5e-3`).
Thousands separators, percent signs, units and words are not part of it; scorers that accept them
(closed-form answers) remove them first, each by its own rule.
"""

from __future__ import annotations

import re

PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
