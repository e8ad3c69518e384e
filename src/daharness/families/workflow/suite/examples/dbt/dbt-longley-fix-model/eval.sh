#!/bin/bash
source ~/anaconda3/etc/profile.d/conda.sh 2>/dev/null
conda activate dbt
cd ~/projects/economy
output=$(dbt run 2>&1)
if echo "$output" | grep -qE "Completed successfully" && echo "$output" | grep -qE "OK created sql table model .*employment_ratio"; then
    echo "dbt run succeed"
else
    echo "dbt run failed"
fi
