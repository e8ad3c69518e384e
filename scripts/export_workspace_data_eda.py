"""Export the data files of the workspace suite's EDA tasks (ids `eda-*`).

The data are real datasets shipped inside installed packages (scikit-learn, statsmodels, vega_datasets);
nothing is downloaded. Each file is written into `src/daharness/families/workspace/suite/tasks/<id>/source/`.
Where a package ships the original file it is copied byte for byte; otherwise the package's loader output
is written as CSV. Hand-written files (README.md, plot.yaml, sample_result.csv, ...) are not touched.
See the Data section of `src/daharness/families/workspace/README.md` for the origin and licence of each dataset.

    python scripts/export_workspace_data_eda.py            # all eda-* tasks
    python scripts/export_workspace_data_eda.py eda-...    # only these tasks

Then regenerate the gold files with scripts/make_workspace_gold.py.
"""

from __future__ import annotations

import gzip
import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import sklearn.datasets
import statsmodels.datasets
import vega_datasets

TASKS = (
    Path(__file__).resolve().parents[1] / "src" / "daharness" / "families" / "workspace" / "suite" / "tasks"
)
VEGA = Path(vega_datasets.__file__).parent / "_data"
STATSMODELS = Path(statsmodels.datasets.__file__).parent
SKLEARN = Path(sklearn.datasets.__file__).parent / "data"


# ---------------------------------------------------------------- writers


def copy_vega(name: str, target: Path, as_name: str | None = None) -> None:
    shutil.copyfile(VEGA / name, target / (as_name or name))


def copy_statsmodels(dataset: str, file: str, target: Path, as_name: str | None = None) -> None:
    shutil.copyfile(STATSMODELS / dataset / file, target / (as_name or file))


def cars_csv(target: Path) -> None:
    """vega cars.json as CSV, columns and values unchanged (Year stays an ISO date string)."""
    records = json.loads((VEGA / "cars.json").read_text())
    pd.DataFrame.from_records(records).to_csv(target / "cars.csv", index=False)


def wine_csv(target: Path) -> None:
    """scikit-learn wine (UCI Wine recognition data): 13 measurements and the cultivar (1, 2, 3)."""
    bunch = sklearn.datasets.load_wine(as_frame=True)
    frame = bunch.frame.rename(columns={"od280/od315_of_diluted_wines": "od280_od315"})
    cultivar = frame.pop("target") + 1
    frame.insert(0, "cultivar", cultivar)
    frame.to_csv(target / "wine.csv", index=False)


def iris_csv(target: Path) -> None:
    bunch = sklearn.datasets.load_iris(as_frame=True)
    frame = bunch.frame.rename(columns=lambda c: c.replace(" (cm)", "_cm").replace(" ", "_"))
    frame["species"] = [bunch.target_names[t] for t in frame.pop("target")]
    frame.to_csv(target / "iris.csv", index=False)


def diabetes_files(target: Path) -> None:
    """The original tab-separated layout of the Efron et al. (2004) diabetes data, plus the
    standardized copy scikit-learn's default loader returns (the distractor)."""
    with gzip.open(SKLEARN / "diabetes_data_raw.csv.gz", "rt") as handle:
        raw = pd.read_csv(handle, sep=r"\s+", header=None)
    with gzip.open(SKLEARN / "diabetes_target.csv.gz", "rt") as handle:
        y = pd.read_csv(handle, header=None)[0]
    raw.columns = ["AGE", "SEX", "BMI", "BP", "S1", "S2", "S3", "S4", "S5", "S6"]
    raw["Y"] = y.astype(int)
    for column in ["AGE", "SEX", "S1"]:
        raw[column] = raw[column].astype(int)
    raw.to_csv(target / "diabetes.tab.txt", sep="\t", index=False)
    scaled = sklearn.datasets.load_diabetes(as_frame=True).frame.round(6)
    scaled.to_csv(target / "diabetes_standardized.csv", index=False)


# ---------------------------------------------------------------- tasks

Export = Callable[[Path], None]
EXPORTS: dict[str, list[Export]] = {
    # data manipulation
    "eda-cars-origin-summary": [cars_csv, lambda t: copy_vega("driving.json", t)],
    "eda-weather-type-pivot": [
        lambda t: copy_vega("seattle-weather.csv", t),
        lambda t: copy_vega("seattle-temps.csv", t),
    ],
    "eda-grunfeld-top-investors": [
        lambda t: copy_statsmodels("grunfeld", "grunfeld.csv", t),
        lambda t: copy_statsmodels("longley", "longley.csv", t),
    ],
    "eda-stocks-annual-returns": [lambda t: copy_vega("stocks.csv", t), lambda t: copy_vega("ohlc.json", t)],
    # data insights
    "eda-wine-cultivar-profile": [wine_csv, iris_csv],
    "eda-seattle-rain-insights": [
        lambda t: copy_vega("seattle-weather.csv", t),
        lambda t: copy_vega("sf-temps.csv", t),
    ],
    "eda-fair-affairs-religiosity": [
        lambda t: copy_statsmodels("fair", "fair.csv", t),
        lambda t: copy_statsmodels("engel", "engel.csv", t),
    ],
    "eda-macro-recessions": [
        lambda t: copy_statsmodels("macrodata", "macrodata.csv", t),
        lambda t: copy_statsmodels("longley", "longley.csv", t),
    ],
    # statistical analysis
    "eda-cars-mpg-correlations": [
        lambda t: copy_vega("cars.json", t),
        lambda t: copy_vega("anscombe.json", t),
    ],
    "eda-diabetes-sex-tests": [diabetes_files],
    "eda-anes-education-vote": [
        lambda t: copy_statsmodels("anes96", "anes96.csv", t),
        lambda t: copy_statsmodels("statecrime", "statecrime.csv", t),
    ],
    "eda-macro-okun-law": [
        lambda t: copy_statsmodels("macrodata", "macrodata.csv", t),
        lambda t: copy_vega("us-employment.csv", t),
    ],
    # visualization
    "eda-crimea-deaths-pie": [lambda t: copy_vega("crimea.json", t), lambda t: copy_vega("burtin.json", t)],
    "eda-barley-site-bar": [lambda t: copy_vega("barley.json", t), lambda t: copy_vega("wheat.json", t)],
    "eda-iowa-electricity-line": [
        lambda t: copy_vega("iowa-electricity.csv", t),
        lambda t: copy_vega("driving.json", t),
    ],
    "eda-cars-origin-scatter": [cars_csv, lambda t: copy_vega("iris.json", t)],
}


def main() -> None:
    wanted = sys.argv[1:] or list(EXPORTS)
    for task_id in wanted:
        if task_id not in EXPORTS:
            raise SystemExit(f"unknown task {task_id!r} (known: {', '.join(EXPORTS)})")
        target = TASKS / task_id / "source"
        target.mkdir(parents=True, exist_ok=True)
        for export in EXPORTS[task_id]:
            export(target)
        size = sum(p.stat().st_size for p in target.rglob("*") if p.is_file())
        print(f"{task_id}: {size / 1024:.0f} KB in source/")


if __name__ == "__main__":
    main()
