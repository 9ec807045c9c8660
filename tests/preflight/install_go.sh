#!/bin/sh
# tests/preflight's Go rows run the real `go` (go vet, go test): install Debian's golang-go when it is missing.
# Needs apt-get and root (or passwordless sudo); says so otherwise.
command -v go >/dev/null 2>&1 && exit 0
if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo -n"; fi
if command -v apt-get >/dev/null 2>&1 && { $SUDO apt-get install -y -q golang-go || { $SUDO apt-get update -q && $SUDO apt-get install -y -q golang-go; }; }; then
    exit 0
fi
echo "warning: could not install go (apt-get install golang-go); tests/preflight/test_detect_make_go_rust.py will fail" >&2
