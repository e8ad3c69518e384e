#!/usr/bin/env bash
# Re-resolves scripts/apps/NAME.lock from NAME.in as of the pinned application's release date, so that
# its unpinned dependencies are the ones it was released with (what Airflow's constraint files give).
#   bash scripts/apps/lock.sh            # all; needs uv (scripts/setup-apps.sh puts one in $DAHARNESS_APPS/.uv)
set -euo pipefail
cd "$(dirname "$0")"
UV="${UV:-${DAHARNESS_APPS:-${XDG_CACHE_HOME:-$HOME/.cache}/daharness/apps}/.uv/bin/uv}"
declare -A AS_OF=([dagster]=2024-05-01 [airflow]=2024-05-15 [astro-dbt]=2024-05-15 [superset]=2024-03-01 [bqemulator]=2026-12-01)
for app in "${!AS_OF[@]}"; do
    "$UV" pip compile -q --python-version 3.11 --python-platform x86_64-manylinux_2_28 \
        --exclude-newer "${AS_OF[$app]}T00:00:00Z" --no-header --no-annotate "$app.in" -o "$app.lock"
    echo "$app.lock: $(grep -c '==' "$app.lock") packages as of ${AS_OF[$app]}"
done
