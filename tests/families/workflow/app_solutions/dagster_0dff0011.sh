# The agent's actions for Spider2-V dagster/0dff0011 ("launch the web page on port 8004"): Dagster's
# webserver started in the project's folder on :8004, left running when the agent ends. The harness
# notes it and starts it again for the checks, whose eval.sh asks :8004.
cd ~/dagster-proj
source ~/anaconda3/etc/profile.d/conda.sh
conda activate dagster
nohup dagster dev -p 8004 > dagster_dev.log 2>&1 &
for attempt in $(seq 240); do
    curl -sf http://localhost:8004/server_info > /dev/null && break
    sleep 0.5
done
curl -sf http://localhost:8004/server_info
