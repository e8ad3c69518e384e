"""Build the built-in `workflow` suite's warehouse tasks (issue 44): BigQuery and Snowflake tasks over real
data, in the release's format, with reference solutions.

The data are real datasets the built-in workspace suite ships (cars, iris, stocks: its family's README
gives their origins), loaded into the warehouse by each task's own `bigquery_init` / `snowflake_init`
step; the agent gets the account's key or settings file on the desktop, as the release's `copy_keyfile`
does, and works through the providers' client libraries. Gold files are what the task's getters read
after the reference solution ran against the local emulators (started here, as the harness starts them
for `--cloud-settings local`), checked against the same figures computed with pandas from the data.

    python scripts/make_warehouse_tasks.py      # needs scripts/setup-apps.sh bqemulator and the test extra
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_workflow_suite import HOME, SUITE, real

from daharness.families.workflow.cloud import emulators, getters, setup
from daharness.families.workflow.cloud.settings import CloudSettings

BQ_KEY = "keyfile.json"
SF_SETTINGS = "snowflake_settings.json"
BQ_NOTE = (
    f" The project's service-account key is ~/{BQ_KEY}: google-cloud-bigquery's "
    f"`bigquery.Client.from_service_account_json` takes it."
)
SF_NOTE = (
    f" The account's settings are in ~/{SF_SETTINGS} (account, user, password, as the release writes them: the "
    "account may be a https://<account>.snowflakecomputing.com address); `snowflake.connector.connect` takes them."
)
BQ_CLIENT = """import json, os
from google.cloud import bigquery

client = bigquery.Client.from_service_account_json(os.path.expanduser("~/keyfile.json"))
project = client.project
"""
SF_CLIENT = """import json, os, re
import snowflake.connector

settings = json.load(open(os.path.expanduser("~/snowflake_settings.json")))
settings["account"] = re.sub(r"^https://|\\.snowflakecomputing\\.com.*$", "", settings["account"])
connection = snowflake.connector.connect(**settings)
cursor = connection.cursor()
"""


@dataclass
class Warehouse:
    id: str
    app: str  # bigquery or snowflake
    instruction: str
    tutorial: str
    data: dict[str, pd.DataFrame]  # CSV files of the task folder
    setup: dict[str, Any]  # the bigquery_init / snowflake_init step's parameters
    copied: dict[str, str]  # task file -> path in the home
    evaluator: dict[str, Any]
    solution: str
    sql: dict[str, str]  # SQL files the getters run
    expected: dict[str, pd.DataFrame]  # gold name -> the same figures with pandas (checked, not written)
    tags: tuple[str, ...] = ("cli", "data_warehousing", "abstract")


def path(spec: Warehouse, name: str) -> str:
    return f"evaluation_examples/examples/{spec.app}/{spec.id}/{name}"


def gold(spec: Warehouse, name: str) -> dict[str, Any]:
    return {"type": "local_file", "path": path(spec, name), "dest": name}


def specs() -> list[Warehouse]:
    cars = real("cars.csv")[["Name", "Origin", "Miles_per_Gallon", "Horsepower", "Weight_in_lbs"]]
    iris = real("iris.csv")
    stocks = real("stocks.csv")
    by_origin = (
        cars.groupby("Origin").agg(cars=("Name", "size"), avg_mpg=("Miles_per_Gallon", "mean")).reset_index()
    )
    by_origin["avg_mpg"] = by_origin["avg_mpg"].round(2)
    ranked = cars.sort_values(["Weight_in_lbs", "Name"], ascending=[False, True])
    heaviest = ranked.groupby("Origin").head(1)[["Origin", "Name", "Weight_in_lbs"]]
    species = (
        iris.groupby("species").agg(mean_petal_length=("petal_length_cm", "mean")).round(3).reset_index()
    )
    prices = stocks.groupby("symbol").agg(n=("price", "size"), avg=("price", "mean")).round(2).reset_index()
    bq_project = {"project_name": "bigquery-project"}

    def empty_then(*actions):
        return {
            **bq_project,
            "actions": [{"type": "empty"}, *actions, {"type": "copy_keyfile", "dest": f"{HOME}/{BQ_KEY}"}],
        }

    sf_copy = {"type": "copy_keyfile", "dest": f"{HOME}/{SF_SETTINGS}"}
    result: list[Warehouse] = []
    spec = Warehouse(
        "bq-cars-origin-summary", "bigquery",
        "In BigQuery, the dataset garage holds the table cars. Create the table garage.origin_summary with one row per "
        "Origin: origin, cars (the number of cars) and avg_mpg (their average Miles_per_Gallon, cars without a value "
        "left out, rounded to 2 decimals)." + BQ_NOTE,
        "1. Connect with the key file.\n2. Run CREATE TABLE garage.origin_summary AS SELECT Origin AS origin, COUNT(*) AS cars, ROUND(AVG(Miles_per_Gallon), 2) AS avg_mpg FROM garage.cars GROUP BY Origin.",
        {"cars.csv": cars},
        empty_then({"type": "create_table", "dataset_id": "garage", "table_id": "cars", "data_from_csv": "cars.csv"}),
        {},
        {"func": "compare_csv", "options": {"ignore_order": True},
         "result": {"type": "bigquery_table_to_csv", **bq_project, "dataset_id": "garage", "table_id": "origin_summary",
                    "schema": ["origin", "cars", "avg_mpg"], "dest": "origin_summary.csv"}},
        BQ_CLIENT + 'client.query(f"""CREATE TABLE `{project}.garage.origin_summary` AS\nSELECT Origin AS origin, COUNT(*) AS cars, ROUND(AVG(Miles_per_Gallon), 2) AS avg_mpg\nFROM `{project}.garage.cars` GROUP BY Origin""").result()\n',
        {}, {"origin_summary_gold.csv": by_origin},
    )  # fmt: skip
    result.append(spec)
    spec = Warehouse(
        "bq-stocks-load-csv", "bigquery",
        "Load ~/stocks.csv into a new BigQuery table market.prices with the columns symbol (STRING), date (DATE) and "
        "price (FLOAT64), one row per line of the file." + BQ_NOTE,
        "1. Create the dataset market.\n2. Read stocks.csv, parse its dates (like 'Jan 1 2000').\n3. Load the rows into market.prices with the schema symbol STRING, date DATE, price FLOAT64.",
        {"stocks.csv": stocks}, empty_then(), {"stocks.csv": "stocks.csv"},
        {"func": "compare_csv",
         "result": {"type": "bigquery_sql_result_to_csv", **bq_project, "sql": path_placeholder("prices.sql"), "dest": "prices.csv"}},
        BQ_CLIENT + 'import io\nimport pandas as pd\nframe = pd.read_csv(os.path.expanduser("~/stocks.csv"))\nframe["date"] = pd.to_datetime(frame["date"], format="%b %d %Y").dt.date\nclient.create_dataset("market", exists_ok=True)\nschema = [bigquery.SchemaField("symbol", "STRING"), bigquery.SchemaField("date", "DATE"), bigquery.SchemaField("price", "FLOAT64")]\nconfig = bigquery.LoadJobConfig(source_format="CSV", skip_leading_rows=1, schema=schema)\nclient.load_table_from_file(io.BytesIO(frame.to_csv(index=False).encode()), f"{project}.market.prices", job_config=config).result()\n',
        {"prices.sql": "SELECT symbol, COUNT(*) AS n, ROUND(AVG(price), 2) AS avg, CAST(MIN(date) AS STRING) AS first_day\nFROM `{0}.market.prices` GROUP BY symbol ORDER BY symbol"},
        {"prices_gold.csv": prices},
    )  # fmt: skip
    result.append(spec)
    spec = Warehouse(
        "bq-iris-species-view", "bigquery",
        "In BigQuery, create the view botany.species_means over the table botany.iris: one row per species with "
        "species and mean_petal_length (the mean petal_length_cm, rounded to 3 decimals). A view, not a table: it "
        "must follow the data." + BQ_NOTE,
        "1. Connect with the key file.\n2. Run CREATE VIEW botany.species_means AS SELECT species, ROUND(AVG(petal_length_cm), 3) AS mean_petal_length FROM botany.iris GROUP BY species.",
        {"iris.csv": iris},
        empty_then({"type": "create_table", "dataset_id": "botany", "table_id": "iris", "data_from_csv": "iris.csv"}),
        {},
        {"func": ["compare_csv", "compare_csv"], "conj": "and",
         "result": [
             {"type": "bigquery_sql_result_to_csv", **bq_project, "sql": path_placeholder("view_rows.sql"), "dest": "view_rows.csv"},
             {"type": "bigquery_sql_result_to_csv", **bq_project, "sql": path_placeholder("view_follows.sql"), "dest": "view_follows.csv"}]},
        BQ_CLIENT + 'client.query(f"""CREATE VIEW `{project}.botany.species_means` AS\nSELECT species, ROUND(AVG(petal_length_cm), 3) AS mean_petal_length\nFROM `{project}.botany.iris` GROUP BY species""").result()\n',
        {"view_rows.sql": "SELECT species, mean_petal_length FROM `{0}.botany.species_means` ORDER BY species",
         # a view follows its table: a row added by the check shows in it (a table made once would not)
         "view_follows.sql": "INSERT INTO `{0}.botany.iris` (species, petal_length_cm) VALUES ('daharness-check', 1.5);\n"
                             "SELECT species, mean_petal_length FROM `{0}.botany.species_means` WHERE species = 'daharness-check'"},
        {"view_rows_gold.csv": species, "view_follows_gold.csv": pd.DataFrame({"species": ["daharness-check"], "m": [1.5]})},
    )  # fmt: skip
    result.append(spec)
    sf_cars = _snowflake_load("GARAGE", "CARS", cars, "cars.csv")
    spec = Warehouse(
        "sf-cars-heaviest-by-origin", "snowflake",
        "In Snowflake, the table GARAGE.PUBLIC.CARS holds cars. Create the table GARAGE.PUBLIC.HEAVIEST with, for each "
        "ORIGIN, the heaviest car (of cars equally heavy, the first NAME in alphabetical order): the columns ORIGIN, "
        "NAME and WEIGHT_IN_LBS." + SF_NOTE,
        "1. Connect with the settings.\n2. CREATE TABLE GARAGE.PUBLIC.HEAVIEST AS SELECT ORIGIN, NAME, WEIGHT_IN_LBS FROM GARAGE.PUBLIC.CARS QUALIFY ROW_NUMBER() OVER (PARTITION BY ORIGIN ORDER BY WEIGHT_IN_LBS DESC, NAME) = 1.",
        {"cars.csv": cars}, {"actions": [{"type": "delete_database", "database": "GARAGE"}, sf_cars, sf_copy]}, {},
        {"func": "compare_csv", "options": {"ignore_order": True},
         "result": {"type": "snowflake_table_to_csv", "database": "GARAGE", "schema": "PUBLIC", "table": "HEAVIEST",
                    "include_header": True, "dest": "heaviest.csv"}},
        SF_CLIENT + 'cursor.execute("""CREATE TABLE GARAGE.PUBLIC.HEAVIEST AS\nSELECT ORIGIN, NAME, WEIGHT_IN_LBS FROM (\n  SELECT ORIGIN, NAME, WEIGHT_IN_LBS, ROW_NUMBER() OVER (PARTITION BY ORIGIN ORDER BY WEIGHT_IN_LBS DESC, NAME) AS R\n  FROM GARAGE.PUBLIC.CARS) WHERE R = 1""")\n',
        {"create_cars.sql": sf_cars.pop("script")}, {"heaviest_gold.csv": heaviest},
    )  # fmt: skip
    result.append(spec)
    spec = Warehouse(
        "sf-stocks-load-csv", "snowflake",
        "Load ~/stocks.csv into a new Snowflake table MARKET.PUBLIC.PRICES (a new database MARKET) with the columns "
        "SYMBOL (VARCHAR), DATE (DATE) and PRICE (FLOAT), one row per line of the file." + SF_NOTE,
        "1. CREATE DATABASE MARKET.\n2. CREATE TABLE MARKET.PUBLIC.PRICES (SYMBOL VARCHAR, DATE DATE, PRICE FLOAT).\n3. Parse the dates of stocks.csv and insert the rows (or PUT the file to a stage and COPY INTO the table).",
        {"stocks.csv": stocks}, {"actions": [{"type": "delete_database", "database": "MARKET"}, sf_copy]},
        {"stocks.csv": "stocks.csv"},
        {"func": "compare_csv",
         "result": {"type": "snowflake_execution_result", "sql_script": path_placeholder("prices.sql"), "dest": "prices.csv"}},
        SF_CLIENT + 'import pandas as pd\nframe = pd.read_csv(os.path.expanduser("~/stocks.csv"))\nframe["date"] = pd.to_datetime(frame["date"], format="%b %d %Y").dt.strftime("%Y-%m-%d")\ncursor.execute("CREATE DATABASE MARKET")\ncursor.execute("CREATE TABLE MARKET.PUBLIC.PRICES (SYMBOL VARCHAR, DATE DATE, PRICE FLOAT)")\ncursor.executemany("INSERT INTO MARKET.PUBLIC.PRICES VALUES (%s, %s, %s)", list(frame.itertuples(index=False, name=None)))\n',
        {"prices.sql": "SELECT SYMBOL, COUNT(*) AS N, ROUND(AVG(PRICE), 2) AS AVG_PRICE, TO_CHAR(MIN(DATE), 'YYYY-MM-DD') AS FIRST_DAY FROM MARKET.PUBLIC.PRICES GROUP BY SYMBOL ORDER BY SYMBOL"},
        {"prices_gold.csv": prices},
    )  # fmt: skip
    result.append(spec)
    sf_iris = _snowflake_load("BOTANY", "IRIS", iris, "iris.csv")
    spec = Warehouse(
        "sf-iris-species-view", "snowflake",
        "In Snowflake, create the view BOTANY.PUBLIC.SPECIES_MEANS over BOTANY.PUBLIC.IRIS: one row per SPECIES with "
        "SPECIES and MEAN_PETAL_LENGTH (the mean PETAL_LENGTH_CM, rounded to 3 decimals). A view, not a table: it "
        "must follow the data." + SF_NOTE,
        "1. Connect with the settings.\n2. CREATE VIEW BOTANY.PUBLIC.SPECIES_MEANS AS SELECT SPECIES, ROUND(AVG(PETAL_LENGTH_CM), 3) AS MEAN_PETAL_LENGTH FROM BOTANY.PUBLIC.IRIS GROUP BY SPECIES.",
        {"iris.csv": iris}, {"actions": [{"type": "delete_database", "database": "BOTANY"}, sf_iris, sf_copy]}, {},
        {"func": ["compare_csv", "compare_csv"], "conj": "and",
         "result": [
             {"type": "snowflake_execution_result", "sql_command": "SELECT SPECIES, MEAN_PETAL_LENGTH FROM BOTANY.PUBLIC.SPECIES_MEANS ORDER BY SPECIES", "dest": "view_rows.csv"},
             {"type": "snowflake_execution_result", "sql_script": path_placeholder("view_follows.sql"), "dest": "view_follows.csv"}]},
        SF_CLIENT + 'cursor.execute("""CREATE VIEW BOTANY.PUBLIC.SPECIES_MEANS AS\nSELECT SPECIES, ROUND(AVG(PETAL_LENGTH_CM), 3) AS MEAN_PETAL_LENGTH FROM BOTANY.PUBLIC.IRIS GROUP BY SPECIES""")\n',
        {"create_iris.sql": sf_iris.pop("script"),
         # the getter runs one statement: the catalog must list it as a view (a table made once would not be)
         "view_follows.sql": "SELECT COUNT(*) AS VIEWS FROM BOTANY.INFORMATION_SCHEMA.VIEWS WHERE TABLE_NAME = 'SPECIES_MEANS'"},
        {"view_rows_gold.csv": species, "view_follows_gold.csv": pd.DataFrame({"VIEWS": [1]})},
    )  # fmt: skip
    result.append(spec)
    return result


def path_placeholder(name: str) -> str:
    """A getter's SQL file, by its release path (filled per task in `build`)."""
    return f"@{name}"


def _snowflake_load(database: str, table: str, frame: pd.DataFrame, csv_name: str) -> dict[str, Any]:
    """An execute_script action making DATABASE.PUBLIC.TABLE from the task's CSV (its script kept aside)."""
    types = {"int64": "INTEGER", "float64": "FLOAT"}
    columns = ",\n    ".join(
        f"{name.upper()} {types.get(str(dtype), 'VARCHAR')}" for name, dtype in frame.dtypes.items()
    )
    script = (
        f"CREATE OR REPLACE DATABASE {database};\n\n"
        f"CREATE OR REPLACE FILE FORMAT {database}.PUBLIC.CSV_FORMAT TYPE = csv FIELD_DELIMITER = ',' SKIP_HEADER = 1 "
        "FIELD_OPTIONALLY_ENCLOSED_BY = '\"';\n\n"
        f"CREATE OR REPLACE STAGE {database}.PUBLIC.LOAD FILE_FORMAT = {database}.PUBLIC.CSV_FORMAT;\n\n"
        f"CREATE OR REPLACE TABLE {database}.PUBLIC.{table} (\n    {columns}\n);\n\n"
        f"PUT file://@{csv_name} @{database}.PUBLIC.LOAD;\n\n"
        f"COPY INTO {database}.PUBLIC.{table} FROM @{database}.PUBLIC.LOAD/{csv_name};\n"
    )
    return {"type": "execute_script", "sql_script": f"@create_{table.lower()}.sql", "script": script}


def _fill(value: Any, spec: Warehouse) -> Any:
    """`@NAME` placeholders as the release's paths of the task's files."""
    if isinstance(value, str) and value.startswith("@"):
        return path(spec, value[1:])
    if isinstance(value, dict):
        return {key: _fill(item, spec) for key, item in value.items()}
    if isinstance(value, list):
        return [_fill(item, spec) for item in value]
    return value


def build(spec: Warehouse, settings: CloudSettings) -> None:
    folder = SUITE / "examples" / spec.app / spec.id
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for name, frame in spec.data.items():
        frame.to_csv(folder / name, index=False)
    for name, text in spec.sql.items():
        (folder / name).write_text(text.replace("file://@", f"file://{path(spec, '')}") + "\n")
    init_kind = "bigquery_init" if spec.app == "bigquery" else "snowflake_init"
    parameters = _fill(spec.setup, spec)
    for action in parameters["actions"]:
        if "data_from_csv" in action:
            action["data_from_csv"] = path(spec, action["data_from_csv"])
    config: list[dict[str, Any]] = [{"type": init_kind, "parameters": parameters}]
    config += [{"type": "copyfile_from_host_to_guest", "parameters": {"src": path(spec, name), "dest": f"{HOME}/{dest}"}}
               for name, dest in spec.copied.items()]  # fmt: skip
    evaluator = _fill(spec.evaluator, spec)
    golds = list(spec.expected)
    evaluator["expected"] = (
        [gold(spec, name) for name in golds] if isinstance(evaluator["func"], list) else gold(spec, golds[0])
    )
    task = {
        "id": spec.id, "snapshot": spec.app, "instruction": spec.instruction,
        "source": ["daharness built-in workflow suite (scripts/make_warehouse_tasks.py)"],
        "config": config, "action_number": spec.tutorial.count("\n") + 1, "related_apps": [spec.app],
        "tags": list(spec.tags), "evaluator": evaluator, "counterpart": None,
    }  # fmt: skip
    (folder / f"{spec.id}.json").write_text(json.dumps(task, indent=2) + "\n")
    (folder / "verbose_instruction.txt").write_text(spec.tutorial.strip() + "\n")
    (folder / "solution.py").write_text(spec.solution)
    for name in spec.expected:  # made below; the loader wants them there
        (folder / name).write_text("")
    make_gold(spec, folder, settings)


def make_gold(spec: Warehouse, folder: Path, settings: CloudSettings) -> None:
    """The setup and the reference solution against the emulators, then the getters' results as gold,
    each checked against the figures pandas computes from the data."""
    from daharness.suites import load_suite

    suite = load_suite(f"spider2v:{SUITE / 'examples' / spec.app}", cloud_settings=str(settings.folder))
    (task,) = [task for task in suite.tasks if task.id == spec.id] or [None]
    if task is None:
        raise SystemExit(f"{spec.id}: not supported: {suite.unsupported.get(spec.id)}")
    data = task.gold.data["cloud"]
    with tempfile.TemporaryDirectory() as scratch:
        home = Path(scratch)
        box = _HomeFolder(home)
        for step in data["steps"]:
            setup.run_cloud_step(box, settings, step["cloud"], step["parameters"])  # type: ignore[arg-type]
        for name, dest in spec.copied.items():
            shutil.copyfile(folder / name, home / dest)
        project = settings.projects[0]
        env = {**os.environ, "HOME": str(home), "BIGQUERY_EMULATOR_HOST": str(project.api_endpoint)}
        done = subprocess.run(
            [sys.executable, str(folder / "solution.py")], cwd=home, env=env, capture_output=True, text=True
        )
        if done.returncode != 0:
            raise SystemExit(f"{spec.id}: the solution failed:\n{done.stderr[-3000:]}")
        results = getters.collect(settings, data["getters"])
    for (name, frame), value in zip(spec.expected.items(), results.values(), strict=True):
        if value is None:
            raise SystemExit(f"{spec.id}: the getter for {name} found nothing after the solution")
        (folder / name).write_text(value)
        _check(spec.id, name, value, frame, header=spec.app == "snowflake")


def _check(task: str, name: str, text: str, expected: pd.DataFrame, header: bool) -> None:
    """The gold file holds the figures pandas computes (its first columns, as numbers and texts, any order)."""
    import io

    def rows(frame: pd.DataFrame) -> list[tuple[Any, ...]]:
        width = expected.shape[1]
        return sorted(
            tuple(round(v, 6) if isinstance(v, float) else v for v in row[:width])
            for row in frame.itertuples(index=False)
        )

    got = pd.read_csv(io.StringIO(text), header=0 if header else None)
    if rows(got) != rows(expected):
        raise SystemExit(f"{task}: {name} differs from pandas:\n{rows(got)[:5]}\n{rows(expected)[:5]}")


class _HomeFolder:
    """What the setup's copy_keyfile writes to: a scratch home folder standing for the sandbox's."""

    def __init__(self, home: Path) -> None:
        self.home = home

    def write_file(self, name: str, content: str) -> Any:
        (self.home / name).parent.mkdir(parents=True, exist_ok=True)
        (self.home / name).write_text(content)
        return type("Written", (), {"ok": True, "stderr": ""})()


def main() -> None:
    with emulators.local_emulators("bigquery", "snowflake") as settings:
        for spec in specs():
            print(f"building {spec.app}/{spec.id}")
            build(spec, settings)


if __name__ == "__main__":
    main()
