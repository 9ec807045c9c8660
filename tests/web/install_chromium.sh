#!/bin/sh
# tests/web's browser tests drive Debian's Chromium at /usr/bin/chromium (Playwright downloads no browser):
# install the package when it is missing. Needs apt-get and root (or passwordless sudo); says so otherwise.
[ -x /usr/bin/chromium ] && exit 0
if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo -n"; fi
if command -v apt-get >/dev/null 2>&1 && $SUDO apt-get update -q && $SUDO apt-get install -y -q chromium; then
    exit 0
fi
echo "warning: could not install chromium (apt-get install chromium); tests/web/test_browser.py will fail" >&2
