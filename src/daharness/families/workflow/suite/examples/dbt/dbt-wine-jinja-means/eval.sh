#!/bin/bash
source ~/anaconda3/etc/profile.d/conda.sh 2>/dev/null
conda activate dbt
cd ~/projects/cellar
output=$(dbt build 2>&1)
if echo "$output" | grep -qE "Completed successfully" && echo "$output" | grep -qE "PASS=4" && echo "$output" | grep -qE "OK created sql table model .*cultivar_means"; then
    echo "dbt build succeed"
else
    echo "dbt build failed"
fi
