# The agent's actions for Spider2-V dagster/9f8eab3f (an asset `top10_story_ids` that saves the ids of
# Hacker News's top 10 stories into data/story_ids.json): the asset written, then materialized with
# Dagster's CLI (as the UI's "Materialize" does). The story ids come from the sandbox's stand-in of
# hacker-news.firebaseio.com, through its HTTPS proxy.
cd ~/projects/hacker_news
cat > hacker_news/assets.py <<'PY'
import json
import os

import requests
from dagster import asset


@asset
def top10_story_ids() -> None:
    top_story_ids = requests.get("https://hacker-news.firebaseio.com/v0/topstories.json").json()[:10]
    os.makedirs("data", exist_ok=True)
    with open("data/story_ids.json", "w") as f:
        json.dump(top_story_ids, f)
PY
source ~/anaconda3/etc/profile.d/conda.sh
conda activate dagster
export DAGSTER_HOME=~/.dagster
dagster asset materialize --select top10_story_ids -m hacker_news
python -c "import json; ids = json.load(open('data/story_ids.json')); assert len(ids) == 10, ids"
