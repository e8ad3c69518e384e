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
databases = call("GET", "/database/", token=token)["result"]
database = next(d for d in databases if d["database_name"] == "Vehicles")
made = call("POST", "/dataset/", {"database": database["id"], "schema": "public", "table_name": "cars"}, token=token)
info = call("GET", f"/dataset/{made['id']}", token=token)["result"]
keep = {"id", "expression", "description", "metric_name", "metric_type", "d3format", "verbose_name", "warning_text"}
metrics = [{k: v for k, v in m.items() if k in keep} for m in info["metrics"]]
metrics.append({"metric_name": "mean_horsepower", "expression": "AVG(horsepower)"})
call("PUT", f"/dataset/{made['id']}", {"metrics": metrics}, token=token)
