#!/usr/bin/env bash
# Installs the Debian packages of the sandbox desktop (`daharness doctor` says whether it is available):
# a virtual X server, a window manager, Chromium, LibreOffice Calc with its GTK front end (the one that
# exposes an accessibility tree), a terminal emulator whose text is accessible, the D-Bus and AT-SPI
# daemons that carry the accessibility tree, and fonts. The Python side is `pip install -e '.[desktop]'`.
# Needs root (or sudo) and apt; installs only what is missing.
set -euo pipefail
packages=(
    xvfb                # the screen: an X server drawing into memory, 1920x1080
    openbox             # window manager: focus, stacking, activating a window by name
    chromium            # the browser, driven over its remote debugging port
    libreoffice-calc    # spreadsheets
    libreoffice-gtk3    # LibreOffice's GTK front end: without it LibreOffice has no accessibility tree
    lxterminal          # a terminal whose text the accessibility tree shows (VTE)
    dbus                # session and accessibility buses
    at-spi2-core        # the accessibility bus launcher and registry
    libatk-adaptor      # the bridge that puts GTK applications on the accessibility bus
    fonts-dejavu-core
    fonts-liberation2   # metric-compatible fonts for spreadsheets
)
missing=()
for package in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$package")
    fi
done
if [ ${#missing[@]} -eq 0 ]; then
    echo "the desktop packages are installed"
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "no apt-get here: install ${missing[*]} with your system's package manager" >&2
    exit 1
fi
run_as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
export DEBIAN_FRONTEND=noninteractive
run_as_root apt-get update -qq
run_as_root apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "desktop packages installed: ${missing[*]}"
