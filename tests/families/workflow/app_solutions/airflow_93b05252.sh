# The agent's actions for Spider2-V airflow/93b05252 (the two extra links of README.md in the plugin, Airflow
# restarted so that its webserver loads it, the DAG unpaused and triggered through the webserver's REST API,
# and its run awaited, as the task says): the check opens the run's grid page with its task selected, where
# both links show.
cat > ~/projects/weather/plugins/my_extra_link_plugin.py <<'PY'
from airflow.plugins_manager import AirflowPlugin
from airflow.models.baseoperator import BaseOperatorLink
from airflow.providers.http.operators.http import SimpleHttpOperator


class WTTRWeatherLink(BaseOperatorLink):
    name = "WTTRWeather"
    operators = [SimpleHttpOperator]

    def get_link(self, operator, *, ti_key=None):
        return "https://wttr.in/HongKong"


class HTTPDocsLink(BaseOperatorLink):
    name = "HTTP file"
    operators = [SimpleHttpOperator]

    def get_link(self, operator, *, ti_key=None):
        return "https://developer.mozilla.org/en-US/docs/Web/HTTP"


class AirflowExtraLinkPlugin(AirflowPlugin):
    name = "extra_link_plugin"
    operator_extra_links = [WTTRWeatherLink(), HTTPDocsLink()]
PY
cd ~/projects/weather && astro dev restart
api() { curl -s --fail --retry 20 --retry-delay 3 --retry-all-errors -u admin:admin -H 'Content-Type: application/json' "$@"; }
api -X PATCH http://localhost:8080/api/v1/dags/weather_data_dag -d '{"is_paused": false}'
api -X POST http://localhost:8080/api/v1/dags/weather_data_dag/dagRuns -d '{}'
for attempt in $(seq 120); do
    api http://localhost:8080/api/v1/dags/weather_data_dag/dagRuns | grep -q '"state": "\(success\|failed\)"' && break
    sleep 2
done
