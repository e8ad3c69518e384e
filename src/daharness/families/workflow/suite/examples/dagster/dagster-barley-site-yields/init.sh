#!/bin/bash
# the Dagster project barley in ~/projects, its webserver and daemon on :3000 (as the official tasks do)
source /home/user/anaconda3/etc/profile.d/conda.sh
conda activate dagster
mkdir -p ~/projects && cd ~/projects
unzip -q ~/barley.zip && rm -f ~/barley.zip
cd barley
export DAGSTER_HOME=/home/user/.dagster
dagster dev -p 3000 > start_server.log 2>&1 &
for i in $(seq 60); do grep -qi "Serving dagster-webserver on" start_server.log && break; sleep 1; done
