# The agent's actions for Spider2-V airflow/b06d6db5 (the DAG changed as the test log in README.md asks: a
# daily schedule, and log_activity before analyze_activity), then the DAG unpaused and triggered through the
# webserver's REST API; its first task calls the Bored API, which the sandbox's stand-in answers.
cd ~/projects/today_task
python3 - <<'PY'
from pathlib import Path

dag = Path("dags/task_today.py")
text = dag.read_text().replace('schedule="@hourly"', 'schedule="@daily"')
text = text.replace(
    "    analyzed_activity = analyze_activity(activity)\n    logged_activity = log_activity(activity)\n",
    "    logged_activity = log_activity(activity)\n    analyzed_activity = analyze_activity(activity)\n",
)
text = text.replace("activity >> analyzed_activity >> logged_activity", "activity >> logged_activity >> analyzed_activity")
dag.write_text(text)
PY
api() { curl -s --fail --retry 20 --retry-delay 3 --retry-all-errors -u admin:admin -H 'Content-Type: application/json' "$@"; }
api -X PATCH http://localhost:8080/api/v1/dags/activity_suggestion_dag -d '{"is_paused": false}'
api -X POST http://localhost:8080/api/v1/dags/activity_suggestion_dag/dagRuns -d '{}'
