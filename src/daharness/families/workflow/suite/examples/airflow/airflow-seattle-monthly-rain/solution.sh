cd ~/projects/weather
sed -i 's/row\["precip"\]/row["precipitation"]/' dags/seattle_weather.py
api() { curl -s --fail --retry 20 --retry-delay 3 --retry-all-errors -u admin:admin -H 'Content-Type: application/json' "$@"; }
api -X PATCH http://localhost:8080/api/v1/dags/seattle_monthly_weather -d '{"is_paused": false}'
api -X POST http://localhost:8080/api/v1/dags/seattle_monthly_weather/dagRuns -d '{}'
for i in $(seq 150); do
    api http://localhost:8080/api/v1/dags/seattle_monthly_weather/dagRuns | grep -qE '"state": ?"success"' && exit 0
    sleep 2
done
exit 1
