# The agent's actions for Spider2-V superset/9771b80c (the table `annotation` of the database PublicData
# registered as a dataset, its default datetime column start_dttm), through Superset's REST API as a user
# of the web UI's API would.
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


login = {"username": "admin", "password": "admin", "provider": "db"}
token = call("POST", "/security/login", login)["access_token"]
databases = call("GET", "/database/", token=token)["result"]
database = next(d for d in databases if d["database_name"] == "PublicData")
created = call("POST", "/dataset/", {"database": database["id"], "schema": "public", "table_name": "annotation"},
               token=token)  # fmt: skip
print(call("PUT", f"/dataset/{created['id']}", {"main_dttm_col": "start_dttm"}, token=token))
