# The agent's file actions for Spider2-V dagster/28b33444 (a sensor `directory_sensor` launching
# `log_file_job`): the sensor's module and the definitions that list it, as its tutorial's editor steps
# write them; screen_solutions.dagster_sensor then starts it on the Dagster UI.
cd ~/file-watch-sensor
cat > file_watch_sensor/directory_sensor.py <<'PY'
import os
from dagster import sensor, RunRequest, RunConfig
from .log_file_job import log_file_job, FileConfig

@sensor(job=log_file_job, minimum_interval_seconds=3)
def directory_sensor():
    for filename in os.listdir("/home/user/file-watch-sensor/files/"):
        filepath = os.path.join("/home/user/file-watch-sensor/files/", filename)
        if os.path.isfile(filepath):
            yield RunRequest(run_key=filename, run_config=RunConfig(ops={"process_file": FileConfig(filename=filename)}))
PY
cat > file_watch_sensor/__init__.py <<'PY'
from dagster import Definitions, load_assets_from_modules

from . import assets, log_file_job
from .directory_sensor import directory_sensor

all_assets = load_assets_from_modules([assets])

defs = Definitions(assets=all_assets, sensors=[directory_sensor])
PY
