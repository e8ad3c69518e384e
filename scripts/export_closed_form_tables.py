"""Export the real datasets behind the built-in `closed-form` suite to CSV, once.

The CSVs are committed under src/daharness/families/closed_form/suite/tables/; this script documents exactly
where each one came from, so anyone can regenerate and diff them. It needs the `data` extra:

    pip install -e '.[data]' && python scripts/export_closed_form_tables.py

Sources and licences are listed in the Data section of src/daharness/families/closed_form/README.md.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pandas as pd

TABLES = Path(__file__).resolve().parents[1] / "src/daharness/families/closed_form/suite/tables"


def _sklearn(loader_name: str, target_names: bool = True, **kwargs: object) -> pd.DataFrame:
    from sklearn import datasets

    bunch = getattr(datasets, loader_name)(as_frame=True, **kwargs)
    frame = bunch.frame.copy()
    if target_names and hasattr(bunch, "target_names") and "target" in frame:
        frame["target"] = [bunch.target_names[i] for i in frame["target"]]
    return frame


def _vega(name: str) -> pd.DataFrame:
    from vega_datasets import data

    return getattr(data, name.replace("-", "_"))()


def _statsmodels(name: str) -> pd.DataFrame:
    import importlib

    module = importlib.import_module(f"statsmodels.datasets.{name}")
    return module.load_pandas().data


EXPORTS: dict[str, Callable[[], pd.DataFrame]] = {
    "iris.csv": lambda: _sklearn("load_iris").rename(columns={"target": "species"}),
    "wine.csv": lambda: _sklearn("load_wine").rename(columns={"target": "cultivar"}),
    "breast_cancer.csv": lambda: _sklearn("load_breast_cancer").rename(columns={"target": "diagnosis"}),
    "diabetes.csv": lambda: _sklearn("load_diabetes", target_names=False, scaled=False).rename(
        columns={"target": "progression"}
    ),
    "cars.csv": lambda: _vega("cars"),
    "seattle_weather.csv": lambda: _vega("seattle-weather"),
    "stocks.csv": lambda: _vega("stocks"),
    "macrodata.csv": lambda: _statsmodels("macrodata"),
    "fair_affairs.csv": lambda: _statsmodels("fair"),
}


def main() -> None:
    TABLES.mkdir(parents=True, exist_ok=True)
    for file_name, load in EXPORTS.items():
        frame = load()
        for column in frame.columns:
            if pd.api.types.is_datetime64_any_dtype(frame[column]):
                frame[column] = frame[column].dt.strftime("%Y-%m-%d")
        frame.to_csv(TABLES / file_name, index=False)
        print(f"{file_name}: {len(frame)} rows x {len(frame.columns)} columns")


if __name__ == "__main__":
    main()
