# The agent's actions for Spider2-V airflow/28467077 (a Postgres connection `postgres_conn`), through the
# Airflow webserver's REST API with the UI's admin login.
curl -s --fail --retry 10 --retry-delay 3 --retry-all-errors -u admin:admin -H 'Content-Type: application/json' -X POST http://localhost:8080/api/v1/connections \
  -d '{"connection_id": "postgres_conn", "conn_type": "postgres", "host": "172.17.0.1", "schema": "jaffle_shop",
       "login": "user", "password": "password", "port": 5432}'
