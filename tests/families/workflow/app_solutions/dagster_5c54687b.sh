# The agent's actions for Spider2-V dagster/5c54687b (a daily-partitioned asset saving the Astronomy
# Picture of the Day's image address, materialized for 2024-04-10 to 2024-04-13): the asset written, then
# each partition materialized on the instance the UI serves, all in one Python process (Dagster's CLI
# would import Dagster once per partition). api.nasa.gov is the sandbox's stand-in, whose answers for
# these days hold the addresses the official gold files recorded.
cd ~/apod-proj
cat > apod_proj/assets.py <<'PY'
import json
import os
import urllib.request

from dagster import AssetExecutionContext, DailyPartitionsDefinition, asset

os.makedirs("data", exist_ok=True)


@asset(partitions_def=DailyPartitionsDefinition(start_date="2024-04-01"))
def apod_asset(context: AssetExecutionContext) -> None:
    day = context.partition_key
    target = f"data/{day}.json"
    urllib.request.urlretrieve(f"https://api.nasa.gov/planetary/apod?api_key=DEMO_KEY&date={day}", target)
    with open(target) as f:
        picture = json.load(f)
    with open(f"data/apod_url_{day}.txt", "w") as f:
        f.write(picture["hdurl"])
PY
source ~/anaconda3/etc/profile.d/conda.sh
conda activate dagster
export DAGSTER_HOME=~/.dagster
python - > /dev/null 2>&1 <<'PY'
from dagster import DagsterInstance, materialize

from apod_proj.assets import apod_asset

instance = DagsterInstance.get()
for day in ("2024-04-10", "2024-04-11", "2024-04-12", "2024-04-13"):
    materialize([apod_asset], partition_key=day, instance=instance)
PY
cat data/apod_url_2024-04-13.txt
