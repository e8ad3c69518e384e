"""Code Similarity Equivalence (CSE) and AccSE, the paper's soft metric (Appendix H.5).

Two embedding models compare the reply's code with the reference code: S1 from CodeT5+ and S2 from
OpenAI Ada (text-embedding-ada-002), each the cosine similarity of the two codes' embeddings. Then

    AccSE = 1      when the code passes (C = Ĉ: the entry's Acc is 1)
            0.5    when S1 > 0.85 and S2 > 0.9
            0.25   when exactly one of S1 > 0.85, S2 > 0.9 holds
            0      otherwise

and AccSER = AccSE x the recall of the private library's functions (as AccR). Both models are reached
through an OpenAI-compatible `/v1/embeddings` endpoint (`--tapilot-cse-url`, `--tapilot-cse-models
CODET5P,ADA`; the key from `$DAHARNESS_CSE_API_KEY`, else `$OPENAI_API_KEY`): Ada on OpenAI's API, CodeT5+
(e.g. `Salesforce/codet5p-110m-embedding`) on any server that serves a local model that way. The paper
proposes the metric without fixing more than this; its thresholds are its own.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

S1_THRESHOLD = 0.85  # CodeT5+
S2_THRESHOLD = 0.9  # Ada
KEY_VARIABLES = ("DAHARNESS_CSE_API_KEY", "OPENAI_API_KEY")


class CseSettings(BaseModel):
    """Where the two embedding models are: one OpenAI-compatible endpoint, CodeT5+'s name then Ada's."""

    model_config = ConfigDict(defer_build=True)  # built when CSE is asked for, not when families register

    base_url: str
    models: list[str] = Field(min_length=2, max_length=2, description="[CodeT5+ model, Ada model]")


def acc_se(passed: bool, s1: float, s2: float) -> float:
    """Equation 4 of the paper."""
    if passed:
        return 1.0
    close = (s1 > S1_THRESHOLD) + (s2 > S2_THRESHOLD)
    return {2: 0.5, 1: 0.25}.get(close, 0.0)


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return sum(x * y for x, y in zip(a, b, strict=True)) / norm if norm else 0.0


def similarities(reference: str, predicted: str, settings: CseSettings) -> tuple[float, float]:
    """(S1, S2): the cosine of the two codes' embeddings by each model."""
    from openai import OpenAI  # here: scoring without CSE imports no client

    api_key = next((os.environ[v] for v in KEY_VARIABLES if os.environ.get(v)), "none")
    client = OpenAI(base_url=settings.base_url, api_key=api_key, max_retries=2, timeout=60)
    scores = []
    for model in settings.models:
        data = client.embeddings.create(model=model, input=[reference, predicted]).data
        vectors = [item.embedding for item in sorted(data, key=lambda item: item.index)]
        scores.append(round(cosine(vectors[0], vectors[1]), 6))
    return scores[0], scores[1]
