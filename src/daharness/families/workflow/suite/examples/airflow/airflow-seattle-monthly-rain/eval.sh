#!/bin/bash
source /home/user/anaconda3/etc/profile.d/conda.sh
conda activate airflow
cd /home/user/projects/weather
CONTAINER=$(astro dev ps | grep webserver | awk '{print $1}')
runs=$(docker exec -i $CONTAINER airflow dags list-runs -d seattle_monthly_weather -o plain 2>/dev/null)
if echo "$runs" | grep -q "success"; then
    echo "seattle_monthly_weather run succeed"
else
    echo "seattle_monthly_weather run failed"
fi
