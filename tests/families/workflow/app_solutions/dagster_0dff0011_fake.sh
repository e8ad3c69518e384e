# A cheat for Spider2-V dagster/0dff0011: a file server on :8004 with a page at the address eval.sh asks
# (officially it scores 1: the check only wants a non-empty page). It is not Dagster, so the harness does
# not start it again for the checks.
mkdir -p ~/fake/locations/dagster_proj
echo '<html>Dagster</html>' > ~/fake/locations/dagster_proj/assets
cd ~/fake
nohup python3 -m http.server 8004 > /dev/null 2>&1 &
for attempt in $(seq 100); do
    curl -sf http://localhost:8004/locations/dagster_proj/assets && break
    sleep 0.2
done
