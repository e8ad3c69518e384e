# Stand-in for anaconda3/etc/profile.d/conda.sh (prototype, issue 25): the official scripts source it,
# then `conda activate dagster|airflow|superset` selects that application's provisioned environment.
# Mounted read-only at /home/user/anaconda3/etc/profile.d/conda.sh, so a check that sources it never
# runs a file the agent wrote.

__daharness_conda_strip() {  # PATH without any application environment
    local out="" part
    local IFS=:
    for part in $PATH; do
        case "$part" in "${DAHARNESS_APPS:-/nonexistent}"/*/bin) ;; *) out="${out:+$out:}$part" ;; esac
    done
    printf '%s' "$out"
}

conda() {
    case "$1" in
        activate)
            local name="${2:-base}"
            if [ "$name" = base ]; then
                PATH="$(__daharness_conda_strip)"
                export CONDA_DEFAULT_ENV=base PATH
                unset CONDA_PREFIX VIRTUAL_ENV
                return 0
            fi
            if [ ! -x "${DAHARNESS_APPS:-/nonexistent}/$name/bin/python" ]; then
                echo "EnvironmentNameNotFound: Could not find conda environment: $name" >&2
                echo "(environments here: $(cd "${DAHARNESS_APPS:-/nonexistent}" 2>/dev/null && ls -d */ 2>/dev/null | tr -d / | grep -v templates | tr '\n' ' '))" >&2
                return 1
            fi
            PATH="$DAHARNESS_APPS/$name/bin:$(__daharness_conda_strip)"
            export PATH CONDA_DEFAULT_ENV="$name" CONDA_PREFIX="$DAHARNESS_APPS/$name" VIRTUAL_ENV="$DAHARNESS_APPS/$name"
            hash -r
            ;;
        deactivate)
            PATH="$(__daharness_conda_strip)"
            export PATH
            unset CONDA_DEFAULT_ENV CONDA_PREFIX VIRTUAL_ENV
            hash -r
            ;;
        env | info)
            echo "# conda environments (provisioned by daharness, read-only):"
            local env
            for env in "${DAHARNESS_APPS:-/nonexistent}"/*/; do
                env="${env%/}"
                [ -x "$env/bin/python" ] && printf '%-12s %s %s\n' "$(basename "$env")" \
                    "$([ "$(basename "$env")" = "${CONDA_DEFAULT_ENV:-}" ] && echo '*' || echo ' ')" "$env"
            done
            ;;
        create | install | remove | update)
            echo "conda $1: the environments here are provisioned and read-only; use pip install --user for extra packages" >&2
            return 1
            ;;
        *)
            echo "conda: only 'activate', 'deactivate' and 'env list' exist in this sandbox" >&2
            return 1
            ;;
    esac
}
