#!/bin/bash
source /home/user/anaconda3/etc/profile.d/conda.sh
conda activate superset
python - <<'PY'
import json
import urllib.request

BASE = "http://localhost:8088/api/v1"


def call(method, path, body=None, token=None):
    headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {token}"} if token else {})}
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(BASE + path, method=method, data=data, headers=headers)
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())


login = {"username": "admin", "password": "admin", "provider": "db"}
token = call("POST", "/security/login", login)["access_token"]
expected = {'Europe': 81.0, 'Japan': 79.84, 'USA': 119.9}
try:
    datasets = call("GET", "/dataset/?q=(page_size:100)", token=token)["result"]
    found = [d for d in datasets if d["table_name"] == "cars" and d["database"]["database_name"] == "Vehicles"]
except Exception:
    found = []
print("dataset cars " + ("succeed" if found else "failed"))
info = call("GET", f"/dataset/{found[0]['id']}", token=token)["result"] if found else {"metrics": []}
named = any(m["metric_name"] == "mean_horsepower" for m in info["metrics"])
print("metric mean_horsepower " + ("succeed" if named else "failed"))
values = {}
if named:
    query = {"metrics": ["mean_horsepower"], "columns": ["origin"], "row_limit": 100}
    body = {"datasource": {"id": found[0]["id"], "type": "table"}, "queries": [query], "result_format": "json", "result_type": "full"}
    try:
        rows = call("POST", "/chart/data", body, token=token)["result"][0]["data"]
        values = {row["origin"]: round(float(row["mean_horsepower"]), 2) for row in rows}
    except Exception as exc:
        print(f"chart data: {exc}")
print("metric values " + ("succeed" if values == expected else f"failed: {values}"))
PY
