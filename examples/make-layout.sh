#!/usr/bin/env bash
# Build the bundled example's synthetic production layout under DIR (default: a new temp dir):
#   DIR/host/auth.json            the "host" credential: a random marker, never a real token (0600)
#   DIR/agent/codex-home/auth.json -> DIR/host-link/auth.json   (private CODEX_HOME link)
#   DIR/host-link -> host         an intermediate symlinked directory (a second hop)
#   DIR/agent/codex-home/auth.lock the credential writer's lock (empty), denied in every mode
#   DIR/workspace/README.txt      a control file model commands may read
#   DIR/roots.toml                the daemon-owned roots manifest (0600)
# Prints DIR on stdout.
set -euo pipefail
dir="${1:-$(mktemp -d /tmp/profilec-example.XXXXXX)}"
mkdir -p "$dir"
chmod 755 "$dir"
mkdir -p "$dir/host" "$dir/agent/codex-home" "$dir/workspace"
marker="PROFILEC-CANARY-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')"
printf '{"OPENAI_API_KEY": "%s"}\n' "$marker" > "$dir/host/auth.json"
chmod 600 "$dir/host/auth.json"
ln -sfn host "$dir/host-link"
ln -sfn "$dir/host-link/auth.json" "$dir/agent/codex-home/auth.json"
# Codex's credential writer locks CODEX_HOME/auth.lock on every save and leaves it there; the
# profiles deny it, and a deny masks only a file that exists when a sandbox starts.
: > "$dir/agent/codex-home/auth.lock"
chmod 600 "$dir/agent/codex-home/auth.lock"
echo "control file: model commands may read this" > "$dir/workspace/README.txt"
cat > "$dir/roots.toml" <<TOML
# Daemon-owned protected credential roots (example). Only lstat/readlink ever touch these.
schema_version = 1

[[roots]]
id = "codex-auth"
path = "$dir/agent/codex-home/auth.json"
backend = "codex"
description = "private CODEX_HOME/auth.json, a symlink chain to the host login"
TOML
chmod 600 "$dir/roots.toml"
echo "$dir"
