#!/bin/bash
# the Astro project weather in ~/projects, started with `astro dev start` (as the official tasks do)
source /home/user/anaconda3/etc/profile.d/conda.sh
conda activate airflow
mkdir -p ~/projects && cd ~/projects
unzip -q ~/weather.zip && rm -f ~/weather.zip
cd weather
echo -e "y\n" | astro dev init > /dev/null
rm -f dags/exampledag.py tests/dags/test_dag_example.py
astro dev start --no-browser
