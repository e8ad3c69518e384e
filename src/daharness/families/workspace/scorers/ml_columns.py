"""Which columns of the agent's CSV and the gold CSV an ML metric compares, and in which row order.

``corrected`` finds the id column (if any) and aligns rows by it, and finds the target column(s) by name;
the ``official_*`` functions reproduce how DA-Code's ``compare_ml`` / ``compare_competition_ml`` pick
columns (``PreprocessML`` in ``da_agent/evaluators/metrics/script/ml_script.py``). Every function
raises ``Unscorable`` with the reason when the files cannot be scored.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from daharness.families.workspace.scorers.ml_metrics import MULTI_COLUMN, Mode

if TYPE_CHECKING:  # the libraries are imported where used, so that registering the scorers is cheap
    import pandas as pd

_LABEL_NAMES = ("label", "labels", "class", "classes", "result", "results")  # the official fallback names
_ID_NAME = re.compile(r"(?:.*[_\s.\-])?id|uuid", re.IGNORECASE)
_CAMEL_ID = re.compile(r".*[a-z0-9]I[dD]")


class Unscorable(Exception):
    """The files cannot be scored; the message becomes the explanation of a 0 score."""


def read_frame(path: Path, what: str) -> pd.DataFrame:
    import pandas as pd

    if not Path(path).is_file():
        raise Unscorable(f"{what} file {Path(path).name} not found")
    try:
        frame = pd.read_csv(path)
    except (ValueError, OSError, UnicodeDecodeError) as exc:  # pandas' parser errors are ValueErrors
        raise Unscorable(f"{what} file {Path(path).name} is not a readable CSV: {exc}") from None
    if frame.empty:
        raise Unscorable(f"{what} file {Path(path).name} has no rows")
    return frame


def _key(name: Any) -> str:
    return re.sub(r"[^0-9a-z]", "", str(name).casefold())


def _find_column(columns: Any, wanted: str) -> str | None:
    """Exact name, else the same name without case and punctuation, else with or without a plural s."""
    columns = list(columns)
    if wanted in columns:
        return wanted
    key = _key(wanted)
    for candidates in ({key}, {key + "s", key.removesuffix("s")}):
        for column in columns:
            if _key(column) in candidates:
                return column
    return None


def _is_index_artifact(column: Any) -> bool:
    return str(column).startswith("Unnamed:")


def _looks_like_id(column: Any) -> bool:
    name = str(column).strip()
    return bool(_ID_NAME.fullmatch(name) or _CAMEL_ID.fullmatch(name))


def _detect_id(predicted: pd.DataFrame, gold: pd.DataFrame, id_column: str | None) -> tuple[Any, Any] | None:
    if id_column is not None:
        gold_id, predicted_id = (
            _find_column(gold.columns, id_column),
            _find_column(predicted.columns, id_column),
        )
        if gold_id is None or predicted_id is None:
            where = "gold" if gold_id is None else "predicted"
            raise Unscorable(f"{where} file has no id column {id_column!r}")
        return gold_id, predicted_id
    for column in gold.columns:
        match = _find_column(predicted.columns, column) if _looks_like_id(column) else None
        if match is not None and gold[column].notna().all() and gold[column].is_unique:
            return column, match
    return None


def _id_keys(values: pd.Series, numeric: bool) -> list[Any]:
    if numeric:
        return [float(v) for v in values]
    return [str(v).strip() for v in values]


def _align_by_id(
    predicted: pd.DataFrame, gold: pd.DataFrame, gold_id: Any, predicted_id: Any
) -> pd.DataFrame:
    import pandas as pd

    numeric = pd.api.types.is_numeric_dtype(gold[gold_id]) and pd.api.types.is_numeric_dtype(
        predicted[predicted_id]
    )
    gold_keys, predicted_keys = _id_keys(gold[gold_id], numeric), _id_keys(predicted[predicted_id], numeric)
    if len(set(predicted_keys)) != len(predicted_keys):
        raise Unscorable(f"predicted ids in {predicted_id!r} are not unique")
    missing, extra = set(gold_keys) - set(predicted_keys), set(predicted_keys) - set(gold_keys)
    if missing or extra:
        raise Unscorable(
            f"ids differ from gold: {len(missing)} missing (e.g. {_sample(missing)}), "
            f"{len(extra)} unexpected (e.g. {_sample(extra)})"
        )
    position = {key: index for index, key in enumerate(predicted_keys)}
    return predicted.iloc[[position[key] for key in gold_keys]].reset_index(drop=True)


def _sample(keys: set[Any]) -> str:
    return ", ".join(str(key) for key in sorted(keys, key=str)[:3]) or "-"


def _target_columns(
    gold: pd.DataFrame, exclude: set[Any], target_column: str | None, multi: bool
) -> list[Any]:
    if target_column is not None:
        found = _find_column(gold.columns, target_column)
        if found is None:
            raise Unscorable(f"gold file has no column {target_column!r}")
        return [found]
    candidates = [c for c in gold.columns if c not in exclude and not _is_index_artifact(c)]
    if len(candidates) == 1:
        return candidates
    named = [c for c in candidates if str(c).strip().lower() in _LABEL_NAMES]
    if len(named) == 1:
        return named
    if multi and candidates:
        return candidates
    raise Unscorable(f"cannot tell the target among gold columns {candidates}; set target_column")


def aligned_columns(
    predicted: pd.DataFrame,
    gold: pd.DataFrame,
    name: str,
    id_column: str | None,
    target_column: str | None,
    details: dict[str, Any],
) -> tuple[pd.DataFrame, pd.DataFrame]:
    ids = _detect_id(predicted, gold, id_column)
    targets = _target_columns(gold, {ids[0]} if ids else set(), target_column, name in MULTI_COLUMN)
    matches = [_find_column(predicted.columns, target) for target in targets]
    if missing := [t for t, m in zip(targets, matches, strict=True) if m is None]:
        raise Unscorable(f"predicted file has no column {', '.join(map(repr, missing))}")
    details.update(target_columns=[str(t) for t in targets], id_column=None if ids is None else str(ids[0]))
    if ids is not None:
        predicted = _align_by_id(predicted, gold, *ids)
        details["alignment"] = "id"
    elif len(predicted) != len(gold):
        raise Unscorable(f"predicted file has {len(predicted)} rows, gold {len(gold)} (and no id column)")
    else:
        details["alignment"] = "position"
    return gold[targets].reset_index(drop=True), predicted[matches].set_axis(targets, axis=1)


def official_columns(
    predicted: pd.DataFrame, gold: pd.DataFrame, target_column: str | None, details: dict[str, Any]
) -> tuple[pd.Series, pd.Series]:
    """``compare_ml``: the same number of rows, the gold target found by name, compared by position."""
    if len(predicted) != len(gold):
        raise Unscorable("The length of the result content is not equal to the length of the true value.")
    official_ids = {c for c in gold.columns if _is_official_id(gold, c)}
    target = _target_columns(gold, official_ids, target_column, multi=False)[0]
    match = _find_column(predicted.columns, str(target))
    if match is None:
        raise Unscorable(f"Could not find target column in result, which is {target} in gold")
    details.update(target_columns=[str(target)], id_column=None, alignment="position")
    return gold[target], predicted[match]


def _is_official_id(frame: pd.DataFrame, column: Any) -> bool:
    name = str(column).lower()
    return (
        ("id" in name or "unnamed" in name)
        and frame[column].nunique() > 0.8 * len(frame)
        and "pca" not in name
        and "feature" not in name
    )


def official_competition_columns(
    predicted: pd.DataFrame, gold: pd.DataFrame, details: dict[str, Any]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    if len(predicted) != len(gold):
        raise Unscorable(
            f"Row count mismatch: result CSV has {len(predicted)} rows, expected {len(gold)} rows."
        )
    if set(predicted.columns) != set(gold.columns):
        raise Unscorable(
            f"Unexpected columns in result CSV: {sorted(set(predicted.columns) - set(gold.columns))}"
        )
    id_name = next((c for c in gold.columns if "id" in str(c).lower()), None)
    details.update(id_column=None, alignment="position")
    if id_name is not None and gold[id_name].nunique() > max(0.6 * len(gold), 2):
        if set(predicted[id_name]) != set(gold[id_name]):
            raise Unscorable("ID does not match the gold ids")
        gold = gold.sort_values(by=id_name).drop(columns=[id_name])
        predicted = predicted.sort_values(by=id_name).drop(columns=[id_name])
        details.update(id_column=str(id_name), alignment="id")
    gold, predicted = gold.sort_index(axis=1), predicted.sort_index(axis=1)
    details["target_columns"] = [str(c) for c in gold.columns]
    return gold.reset_index(drop=True), predicted.reset_index(drop=True)


def cluster_columns(
    frame: pd.DataFrame, target_column: str | None, id_column: str | None, mode: Mode, details: dict[str, Any]
) -> tuple[pd.DataFrame, pd.Series]:
    """The features and cluster labels of a clustering output (``silhouette``)."""
    import pandas as pd

    # The official evaluator always looks for "Cluster", whatever the task's target_column says.
    wanted = "Cluster" if mode == "compat" else (target_column or "Cluster")
    label = _find_column(frame.columns, wanted)
    if label is None and (target_column is None or mode == "compat"):
        few = [c for c in frame.columns if 1 <= frame[c].nunique() < max(0.01 * len(frame), 10)]
        named = [c for c in few if str(c).lower() in _LABEL_NAMES]
        label = few[0] if len(few) == 1 else (named[0] if named else None)
    if label is None:
        raise Unscorable(f"no cluster-label column {wanted!r} in the predicted file")
    details.update(target_columns=[str(label)], alignment="none")
    if mode == "compat":
        # The official features are every column but the id ones, the label column included (defect 7).
        features = frame[[c for c in frame.columns if not _is_official_id(frame, c)]]
        details["feature_columns"] = [str(c) for c in features.columns]
        return features, frame[label]
    dropped = {label}
    if id_column is not None:
        dropped.add(_find_column(frame.columns, id_column))
    dropped |= {
        c for c in frame.columns if _is_index_artifact(c) or (_looks_like_id(c) and frame[c].is_unique)
    }
    kept = [c for c in frame.columns if c not in dropped]
    numeric = [c for c in kept if pd.api.types.is_numeric_dtype(frame[c])]
    details.update(
        feature_columns=[str(c) for c in numeric], ignored_columns=[str(c) for c in kept if c not in numeric]
    )
    if not numeric:
        raise Unscorable("the predicted file has no numeric feature column besides the cluster labels")
    return frame[numeric], frame[label]
