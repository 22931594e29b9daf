#!/usr/bin/env bash
# Build the bundled example's synthetic production layout under DIR (default: a new temp dir):
#   DIR/host/auth.json            the "host" credential: a random marker, never a real token (0600)
#   DIR/agent/codex-home/auth.json -> DIR/host-link/auth.json   (private CODEX_HOME link)
#   DIR/host-link -> host         an intermediate symlinked directory (a second hop)
#   DIR/agent/codex-home/auth.lock the credential writer's lock (empty), denied in every mode
#   DIR/workspace/README.txt      a control file model commands may read
#   DIR/roots.toml                the daemon-owned roots manifest (0600)
#   DIR/layout.toml               the daemon-owned plan layout for `profilec plan` (0600)
# Prints DIR on stdout.
set -euo pipefail
# Editor schema hints (taplo `#:schema`) point at the checkout's schemas/, the files the package ships.
schemas="$(cd "$(dirname "$0")/.." && pwd)/schemas"
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
#:schema $schemas/roots-manifest.schema.json
# Daemon-owned protected credential roots (example). Only lstat/readlink ever touch these.
schema_version = 1

[[roots]]
id = "codex-auth"
path = "$dir/agent/codex-home/auth.json"
backend = "codex"
description = "private CODEX_HOME/auth.json, a symlink chain to the host login"
TOML
chmod 600 "$dir/roots.toml"
mkdir -p "$dir/daemon" "$dir/hosthome"
# The session's TMPDIR, as the plan sets it (agent_home lies under /tmp, and Codex runs no
# command with CODEX_HOME under its temp dir): compile takes it as --tmpdir.
mkdir -p -m 700 "$dir/daemon/state/cand-1/tmp"
cat > "$dir/layout.toml" <<TOML
#:schema $schemas/plan-layout.schema.json
# Daemon-owned plan layout (example): where the trusted Codex parent runs (profilec plan).
schema_version = 1
daemon_root = "$dir/daemon"
agent_home = "$dir/agent/codex-home"
workspace_roots = ["$dir/workspace"]
state_dir = "$dir/daemon/state/cand-1"
backends = ["codex"]

[hidden]
host_home = "$dir/hosthome"
TOML
chmod 600 "$dir/layout.toml"
echo "$dir"
