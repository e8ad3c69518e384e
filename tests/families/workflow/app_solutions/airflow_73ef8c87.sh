# The agent's actions for Spider2-V airflow/73ef8c87 (an HTTP connection `http_weather_service` to wttr.in,
# the DAG unpaused and triggered), through the Airflow webserver's REST API with the UI's admin login.
# The DAG's HTTP operator reaches https://wttr.in through the sandbox's web API stand-in.
api() { curl -s --fail --retry 10 --retry-delay 3 --retry-all-errors -u admin:admin -H 'Content-Type: application/json' "$@"; }
api -X POST http://localhost:8080/api/v1/connections \
  -d '{"connection_id": "http_weather_service", "conn_type": "http", "host": "wttr.in", "schema": "https"}'
api -X PATCH http://localhost:8080/api/v1/dags/weather_data_dag -d '{"is_paused": false}'
api -X POST http://localhost:8080/api/v1/dags/weather_data_dag/dagRuns -d '{}'
