#!/usr/bin/env bash
# Headless Chromium (Debian `chromium`) for the audit report's browser test (marker `browser`).
# Idempotent: installs only when missing; prints one `tools:` line; exits non-zero on failure.
set -euo pipefail

su_cmd=()
[ "$(id -u)" -eq 0 ] || su_cmd=(sudo)

installed() {
    dpkg-query -W -f='${Status}' chromium 2>/dev/null | grep -q '^install ok installed$'
}

state="present"
if ! installed; then
    export DEBIAN_FRONTEND=noninteractive
    "${su_cmd[@]}" apt-get update -qq >/dev/null
    "${su_cmd[@]}" apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
    state="installed"
fi
installed || { echo "tools: apt chromium: FAILED to install" >&2; exit 1; }
command -v chromium >/dev/null || { echo "tools: chromium binary not on PATH" >&2; exit 1; }
echo "tools: apt chromium $(dpkg-query -W -f='${Version}' chromium) ($state)"
