# The agent's actions for Spider2-V superset/77df6495 (a metric SumCost and a calculated column IntCost on
# the dataset `flights`), done through Superset's REST API as a user of the web UI's API would.
import json
import urllib.request

BASE = "http://localhost:8088/api/v1"


def call(method, path, body=None, token=None):
    request = urllib.request.Request(
        BASE + path,
        method=method,
        data=json.dumps(body).encode() if body is not None else None,
        headers={
            "Content-Type": "application/json",
            **({"Authorization": f"Bearer {token}"} if token else {}),
        },
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())


token = call("POST", "/security/login", {"username": "admin", "password": "admin", "provider": "db"})[
    "access_token"
]
datasets = call("GET", "/dataset/", token=token)["result"]
dataset = next(d for d in datasets if d["table_name"] == "flights")
info = call("GET", f"/dataset/{dataset['id']}", token=token)["result"]
metric_keys = {
    "id",
    "expression",
    "description",
    "metric_name",
    "metric_type",
    "d3format",
    "verbose_name",
    "warning_text",
}
column_keys = {
    "id",
    "column_name",
    "type",
    "verbose_name",
    "description",
    "expression",
    "filterable",
    "groupby",
    "is_active",
    "is_dttm",
    "python_date_format",
}
metrics = [{k: v for k, v in m.items() if k in metric_keys} for m in info["metrics"]]
columns = [{k: v for k, v in c.items() if k in column_keys} for c in info["columns"]]
metrics.append({"metric_name": "SumCost", "expression": 'SUM("Cost")'})
columns.append({"column_name": "IntCost", "expression": 'CAST("Cost" as INTEGER)'})
print(call("PUT", f"/dataset/{dataset['id']}", {"metrics": metrics, "columns": columns}, token=token))
