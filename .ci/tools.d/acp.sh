#!/usr/bin/env bash
# ACP adapters for the end-to-end matrix (tests/integration/test_e2e_acp.py), pinned; idempotent.
#   npm @agentclientprotocol/codex-acp@$TS_VER  -> $PROFILEC_CACHE/acp/agentclientprotocol-codex-acp-$TS_VER
#   npm @zed-industries/codex-acp@$ZED_VER      -> $PROFILEC_CACHE/acp/zed-industries-codex-acp-$ZED_VER
# Keep the versions in step with compiler/e2e/adapters.py (a unit test compares them).
set -euo pipefail

repo="$(cd "$(dirname "$0")/../.." && pwd)"
# = profilec.settings.cache_dir(): root's cache must stay reachable by the non-root run-as user
if [ -n "${PROFILEC_CACHE:-}" ]; then cache="$PROFILEC_CACHE"
elif [ "$(id -u)" -eq 0 ]; then cache=/var/cache/profilec
else cache="${XDG_CACHE_HOME:-$HOME/.cache}/profilec"; fi
TS_VER="${PROFILEC_ACP_TS_VERSION:-2.6.0}"
ZED_VER="${PROFILEC_ACP_ZED_VERSION:-0.16.0}"

command -v npm >/dev/null || { echo "tools: npm not found (needs node >= 20)" >&2; exit 1; }
# The +non-root launch methods start the adapter as another uid with setpriv (util-linux).
command -v setpriv >/dev/null || { echo "tools: setpriv not found (util-linux)" >&2; exit 1; }
echo "tools: setpriv $(command -v setpriv) (present)"

install_pkg() {  # <npm name> <version> <dir> <file that proves the install>
    local name="$1" ver="$2" dest="$3" probe="$4" state="present"
    if [ ! -e "$dest/$probe" ]; then
        mkdir -p "$dest"
        npm install --prefix "$dest" --no-audit --no-fund --loglevel=error "$name@$ver" >/dev/null
        state="installed"
    fi
    [ -e "$dest/$probe" ] || { echo "tools: $name@$ver: $probe missing under $dest" >&2; exit 1; }
    echo "tools: npm $name $ver $dest ($state)"
}

install_pkg @agentclientprotocol/codex-acp "$TS_VER" \
    "$cache/acp/agentclientprotocol-codex-acp-$TS_VER" \
    "node_modules/@agentclientprotocol/codex-acp/dist/index.js"
install_pkg @zed-industries/codex-acp "$ZED_VER" \
    "$cache/acp/zed-industries-codex-acp-$ZED_VER" \
    "node_modules/@zed-industries/codex-acp/package.json"
zbin="$(compgen -G "$cache/acp/zed-industries-codex-acp-$ZED_VER/node_modules/@zed-industries/codex-acp-linux-*/bin/codex-acp" | head -n1 || true)"
if [ -n "$zbin" ]; then
    echo "tools: zed codex-acp binary $zbin"
else
    # Not an install failure: the matrix records the adapter as not-supported on this platform.
    echo "tools: zed codex-acp $ZED_VER: no binary for $(uname -m) linux (recorded as not-supported)"
fi
