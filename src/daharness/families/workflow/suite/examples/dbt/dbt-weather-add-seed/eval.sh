#!/bin/bash
source ~/anaconda3/etc/profile.d/conda.sh 2>/dev/null
conda activate dbt
cd ~/projects/weather
output=$(dbt run 2>&1)
if echo "$output" | grep -qE "Completed successfully" && echo "$output" | grep -qE "OK created sql table model .*weather_summary"; then
    echo "dbt run succeed"
else
    echo "dbt run failed"
fi
