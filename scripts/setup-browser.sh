#!/usr/bin/env bash
# Installs Debian's chromium for the viewer's browser tests (tests/test_view.py drives it through
# Playwright's Python API with executable_path=/usr/bin/chromium; Playwright's own browser download is
# not used). Needs root (or sudo) and apt; does nothing when chromium is already there.
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then
    echo "chromium is installed: $(command -v chromium)"
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "no apt-get here: install chromium with your system's package manager" >&2
    exit 1
fi
run_as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
export DEBIAN_FRONTEND=noninteractive
run_as_root apt-get update -qq
run_as_root apt-get install -y -qq --no-install-recommends chromium
echo "chromium installed: $(command -v chromium)"
