#!/usr/bin/env bash
# Ensure what the real (docker / codex / bwrap) tests need; idempotent; prints one line per tool.
#   apt: docker.io busybox-static bubblewrap dash strace (apt-get update only when something is missing)
#   npm: @openai/codex@$PROFILEC_CODEX_VERSION into $PROFILEC_CACHE/codex-<ver>
#   engine: starts dockerd (no bridge, no iptables) only when `docker info` fails
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
# = profilec.settings.cache_dir(): root's cache must stay reachable by the non-root run-as user
if [ -n "${PROFILEC_CACHE:-}" ]; then cache="$PROFILEC_CACHE"
elif [ "$(id -u)" -eq 0 ]; then cache=/var/cache/profilec
else cache="${XDG_CACHE_HOME:-$HOME/.cache}/profilec"; fi
ver="${PROFILEC_CODEX_VERSION:-0.171.0}"   # keep in step with compiler/settings.py
mkdir -p "$cache"

su_cmd=()
[ "$(id -u)" -eq 0 ] || su_cmd=(sudo)

pkg_installed() {
    dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q '^install ok installed$'
}

# --- apt packages -----------------------------------------------------------------------------
pkgs=(docker.io busybox-static bubblewrap dash strace)
missing=()
for p in "${pkgs[@]}"; do
    pkg_installed "$p" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    "${su_cmd[@]}" apt-get update -qq >/dev/null
    "${su_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
for p in "${pkgs[@]}"; do
    state="present"
    for m in "${missing[@]+"${missing[@]}"}"; do
        [ "$m" = "$p" ] && state="installed"
    done
    pkg_installed "$p" || { echo "tools: apt $p: FAILED to install" >&2; exit 1; }
    echo "tools: apt $p $(dpkg-query -W -f='${Version}' "$p") ($state)"
done
[ -x /bin/busybox ] || { echo "tools: /bin/busybox missing after busybox-static" >&2; exit 1; }

# --- pinned codex, and the floor codex-acp 2.6.0 accepts --------------------------------------
# The differential tester runs against both (tests/integration/test_differential.py): codex-acp
# 2.6.0 takes any `@openai/codex ^0.166.0`, so its users run 0.166.0 as well as the pin.
floor="0.166.0"   # keep in step with tests/integration/test_differential.py
install_codex() {
    local v="$1" dest="$cache/codex-$1" bin state="present"
    bin="$(compgen -G "$dest/node_modules/@openai/codex-linux-*/vendor/*/bin/codex" | head -n1 || true)"
    if [ -z "$bin" ]; then
        command -v npm >/dev/null || { echo "tools: npm not found (needs node >= 20)" >&2; exit 1; }
        mkdir -p "$dest"
        npm install --prefix "$dest" --no-audit --no-fund --loglevel=error "@openai/codex@$v" >/dev/null
        bin="$(compgen -G "$dest/node_modules/@openai/codex-linux-*/vendor/*/bin/codex" | head -n1 || true)"
        state="installed"
    fi
    [ -n "$bin" ] || { echo "tools: codex $v: native binary not found under $dest" >&2; exit 1; }
    echo "tools: codex $("$bin" --version 2>/dev/null | awk '{print $NF}') $bin ($state)"
}
install_codex "$ver"
[ "$ver" = "$floor" ] || install_codex "$floor"

# --- docker engine ------------------------------------------------------------------------------
if docker info >/dev/null 2>&1; then
    echo "tools: docker engine $(docker info --format '{{.ServerVersion}}' 2>/dev/null) (running, used as is)"
else
    log="$cache/dockerd.log"
    echo "starting dockerd at $(date -u +%FT%TZ)" >>"$log"
    # Its own mount namespace: container rootfs mounts (/var/lib/docker/overlay2/*/merged) never
    # appear on the host, where each host `codex sandbox` start (bwrap) binds and remounts every
    # host mount. A container ending mid-start failed one (`bwrap: Can't bind mount /oldroot/var
    # ... remount ".../overlay2/<id>/merged": Invalid argument`, suite run beside busy loops).
    "${su_cmd[@]}" nohup unshare --mount --propagation private \
        dockerd --bridge=none --iptables=false --ip6tables=false >>"$log" 2>&1 &
    echo "$!" >"$cache/dockerd.pid"
    deadline=$((SECONDS + 60))
    until [ -S /var/run/docker.sock ] && docker info >/dev/null 2>&1; do
        if [ "$SECONDS" -ge "$deadline" ]; then
            echo "tools: dockerd did not answer within 60 s; log: $log" >&2
            tail -n 20 "$log" >&2 || true
            exit 1
        fi
        sleep 0.5
    done
    echo "tools: docker engine $(docker info --format '{{.ServerVersion}}') (started, pid $(cat "$cache/dockerd.pid"), log $log)"
fi

# --- per-feature tool scripts ---------------------------------------------------------------------
# Each feature that needs more tools (a browser, ACP adapters, a newer node) adds its own
# idempotent script here, run in name order with the same environment.
# PROFILEC_TOOLS_CORE_ONLY=1 (examples/run.sh) stops here: the main job needs no browser or adapters.
[ "${PROFILEC_TOOLS_CORE_ONLY:-0}" = 1 ] && exit 0
for extra in "$repo"/.ci/tools.d/*.sh; do
    [ -e "$extra" ] || continue
    PROFILEC_CACHE="$cache" bash "$extra"
done
