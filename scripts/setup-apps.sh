#!/usr/bin/env bash
# Installs the data applications of Spider2-V's Dagster, Airflow and Superset tasks, one Python
# environment each (their pins conflict with each other and with daharness's own), plus the Debian
# servers they talk to (PostgreSQL, MariaDB). Sandboxes mount the environments read-only; the
# official scripts' `conda activate dagster|airflow|superset` selects one.
#
#   bash scripts/setup-apps.sh [dagster] [airflow] [astro-dbt] [superset] [bqemulator]   # default: all
#
# bqemulator is BigQuery's local emulator, which the harness serves on the host for the warehouse tasks
# when no cloud account is given (docs/cloud.md); its pins conflict with the test extra's fakesnow.
#
# Where: $DAHARNESS_APPS (default ~/.cache/daharness/apps), one folder per application. Idempotent:
# an environment whose lock file, Python and folder are unchanged is kept as it is (a stamp file,
# written last, records them), so a second run takes seconds and CI can keep the folder between runs.
# What: scripts/apps/NAME.in lists the pins of the official snapshot (spider2v_snapshot.sh); NAME.lock
# is that list resolved once as of the release dates (uv pip compile --exclude-newer), and is what is
# installed, exactly (uv pip sync), with bytecode compiled so that read-only mounts start fast.
# Needs: Python 3.11 ($DAHARNESS_APPS_PYTHON, default the python3 on PATH), PyPI, and for the Debian
# packages apt and root (skipped with a note when they are installed already).
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
LOCKS="$HERE/apps"
APPS="${DAHARNESS_APPS:-${XDG_CACHE_HOME:-$HOME/.cache}/daharness/apps}"
PYTHON="${DAHARNESS_APPS_PYTHON:-python3}"
UV_VERSION="0.13.9"
DEBIAN_PACKAGES=(postgresql mariadb-server mariadb-client libmariadb-dev pkg-config gcc jq curl unzip)
ALL=(dagster airflow astro-dbt superset bqemulator)

say() { printf 'setup-apps: %s\n' "$*"; }
die() { printf 'setup-apps: %s\n' "$*" >&2; exit 2; }

wanted=("$@")
[ ${#wanted[@]} -eq 0 ] && wanted=("${ALL[@]}")
for app in "${wanted[@]}"; do
    [ -f "$LOCKS/$app.lock" ] || die "no application '$app' (choose from: ${ALL[*]})"
done

python_version="$("$PYTHON" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])')" \
    || die "no Python at '$PYTHON' (set DAHARNESS_APPS_PYTHON)"
case "$python_version" in
    3.11.*) ;;
    *) die "the applications' locks are for Python 3.11, and $PYTHON is $python_version (set DAHARNESS_APPS_PYTHON)" ;;
esac

install_debian_packages() {
    local missing=()
    for package in "${DEBIAN_PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    command -v apt-get >/dev/null || die "install these with your package manager: ${missing[*]}"
    local sudo=()
    [ "$(id -u)" -eq 0 ] || sudo=(sudo)
    say "installing Debian packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    "${sudo[@]}" apt-get update -qq
    # the servers are started per sample by daharness, never as system services
    "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

uv_tool() {  # uv, itself from PyPI, in a venv of its own beside the applications
    local tool="$APPS/.uv"
    if [ ! -x "$tool/bin/uv" ] || [ "$("$tool/bin/uv" --version | cut -d' ' -f2)" != "$UV_VERSION" ]; then
        rm -rf "$tool"
        "$PYTHON" -m venv "$tool"
        "$tool/bin/python" -m pip install -q "uv==$UV_VERSION"
    fi
    echo "$tool/bin/uv"
}

stamp_of() {  # what an environment was built from: its lock, the Python, and its own folder
    printf '%s %s %s\n' "$(sha256sum "$LOCKS/$1.lock" | cut -d' ' -f1)" "$python_version" "$APPS/$1"
}

install_env() {
    local app="$1" uv="$2" target="$APPS/$1"
    local stamp
    stamp="$(stamp_of "$app")"
    if [ -f "$target/.daharness-stamp" ] && [ "$(cat "$target/.daharness-stamp")" = "$stamp" ]; then
        say "$app: up to date in $target"
        return 0
    fi
    say "$app: installing into $target"
    local start=$SECONDS
    rm -rf "$target"
    "$uv" venv -q --python "$PYTHON" "$target"
    # mysqlclient has no Linux wheel: it is built against libmariadb-dev
    "$uv" pip sync -q --python "$target/bin/python" --compile-bytecode "$LOCKS/$app.lock"
    chmod -R a+rX "$target"
    echo "$stamp" >"$target/.daharness-stamp"
    say "$app: done in $((SECONDS - start)) s, $(du -sh "$target" | cut -f1)"
}

build_templates() {  # the PostgreSQL data folder samples start from (Superset and Airflow metadata migrated)
    local target="$APPS/templates/pgdata" services="$HERE/../src/daharness/families/workflow/apps/standins/appservices.py" stamp
    # rebuilt when an environment changes or appservices.py's TEMPLATE_VERSION is raised
    stamp="$( (cat "$APPS/superset/.daharness-stamp" "$APPS/airflow/.daharness-stamp"; grep '^TEMPLATE_VERSION' "$services") \
        | sha256sum | cut -d' ' -f1)"
    if [ -f "$target/.daharness-stamp" ] && [ "$(cat "$target/.daharness-stamp")" = "$stamp" ]; then
        say "templates: up to date in $target"
        return 0
    fi
    say "templates: building $target (Superset and Airflow metadata migrations)"
    local start=$SECONDS work="$APPS/templates.new"
    rm -rf "$work" && mkdir -p "$work"
    local as_user=()  # PostgreSQL refuses to run as root: map root to an unprivileged user
    [ "$(id -u)" -eq 0 ] && as_user=(unshare --user --map-user=65534 --map-group=65534)
    "${as_user[@]}" env DAHARNESS_APPS="$APPS" PATH="/usr/bin:/bin" "$PYTHON" "$services" build-templates "$work/pgdata"
    echo "$stamp" >"$work/pgdata/.daharness-stamp"
    rm -rf "$APPS/templates" && mv "$work" "$APPS/templates"
    say "templates: done in $((SECONDS - start)) s, $(du -sh "$APPS/templates" | cut -f1)"
}

install_debian_packages
mkdir -p "$APPS"
uv="$(uv_tool)"
for app in "${wanted[@]}"; do
    install_env "$app" "$uv"
done
if [ -f "$APPS/superset/.daharness-stamp" ] && [ -f "$APPS/airflow/.daharness-stamp" ]; then
    build_templates
fi
say "applications in $APPS: ${wanted[*]}"
