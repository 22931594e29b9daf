#!/usr/bin/env bash
# The main job on the bundled example: build a synthetic layout, compile every output format,
# then `profilec check` (static proof + lints), with canaries when a Docker engine and the
# pinned Codex are available. Artifacts land in ./out/example/.
#
# With PROFILEC set (the command to run, e.g. PROFILEC=/venv/bin/profilec; PROFILEC_PYTHON the
# interpreter it runs on) it tests an installed profilec instead: nothing is installed, the
# working directory is left alone (run it from outside the checkout so nothing imports from the
# source tree) and artifacts land in $PROFILEC_EXAMPLE_OUT (default ./out/example).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
if [ -n "${PROFILEC:-}" ]; then
  read -r -a pc <<<"$PROFILEC"
  py="${PROFILEC_PYTHON:-python3}"
  out="${PROFILEC_EXAMPLE_OUT:-out/example}"
else
  cd "$here"
  python3 -m pip install --quiet --disable-pip-version-check -e '.[dev]'
  # The console script pip just installed; `python3 -P -m profilec` when its bin dir is not on
  # PATH (-P: the working directory is not put on sys.path, so only the installed one runs).
  if command -v profilec >/dev/null 2>&1; then pc=(profilec); else pc=(python3 -P -m profilec); fi
  py=python3
  out="out/example"
fi
# `command` runs the program, never this function: with pc=(profilec) the function once called
# itself until bash ran out of stack (a segfault on a fresh clone).
profilec() { command "${pc[@]}" "$@"; }
dir="$(bash "$here/examples/make-layout.sh")"
trap 'rm -rf "$dir"' EXIT
mkdir -p "$out"
# --tmpdir: the TMPDIR the plan gives the session (the layout lives under /tmp, and compile
# refuses a CODEX_HOME under the launch's temp dir: Codex would run no command).
common=(--roots "$dir/roots.toml" --workspace-root "$dir/workspace" --codex-home "$dir/agent/codex-home"
  --tmpdir "$dir/daemon/state/cand-1/tmp")
for fmt in toml overrides acp-json bundle; do
  ext="$fmt"; [ "$fmt" = "acp-json" ] && ext="json"; [ "$fmt" = "bundle" ] && ext="bundle.json"
  [ "$fmt" = "overrides" ] && ext="txt"
  if profilec compile "${common[@]}" --format "$fmt" --out "$out/profiles.$ext"; then
    echo "compiled: $out/profiles.$ext"
  else
    rc=$?; echo "compile --format $fmt failed (exit $rc)"; exit "$rc"
  fi
done
# --run-as: the uid Codex runs as (a root compile of codex-home or launch must name it; here the
# user running this script, who owns the layout).
profilec compile "${common[@]}" --run-as "$(id -u)" --format codex-home --out "$out/codex-home"
echo "compiled: $out/codex-home/config.toml"
# Codex's managed requirements: the layer no client, mode or cwd loosens. A launcher installs it
# at /etc/codex/requirements.toml (`profilec requirements install`) or binds this file there in
# its outer boundary; check verifies the file the launch runs under (PC056).
profilec compile "${common[@]}" --format requirements --out "$dir/requirements.toml"
cp "$dir/requirements.toml" "$out/requirements.toml"
echo "compiled: $out/requirements.toml"
req=(--requirements "$dir/requirements.toml")
cat "$out/profiles.toml"
canary=()
if [ -f "$here/.ci/tools.sh" ] && { docker info >/dev/null 2>&1 || [ "${PROFILEC_EXAMPLE_SETUP:-1}" = 1 ]; }; then
  PROFILEC_TOOLS_CORE_ONLY=1 bash "$here/.ci/tools.sh" >/dev/null 2>&1 || true
fi
if docker info >/dev/null 2>&1 && "$py" -c 'import profilec.canary.run' 2>/dev/null; then
  canary=(--canary)
fi
profilec check "${common[@]}" "${req[@]}" "${canary[@]}" --format text
# The outer boundary: the mount plan the trusted Codex parent runs in (json and bwrap; docker
# cannot recreate this example's link outside a bound directory and says so).
for fmt in json bwrap; do
  profilec plan --roots "$dir/roots.toml" --layout "$dir/layout.toml" --format "$fmt" \
    --out "$out/plan.$fmt"
  echo "plan: $out/plan.$fmt"
done
# Reviewer audit: lock the bundle, prove no drift, and write the report (with the canary
# decisions when the canaries can run here).
# The lock lives beside the roots manifest, where no mode writes (check --lock fails, PC050,
# on a lock a model command could rewrite); out/ gets a copy for reviewers.
profilec lock "${common[@]}" --out "$dir/profilec.lock"
profilec check "${common[@]}" "${req[@]}" --lock "$dir/profilec.lock" --format json --out "$out/check.json"
cp "$dir/profilec.lock" "$out/profilec.lock"
echo "lock: $out/profilec.lock (no drift)"
cj=()
if [ "${#canary[@]}" -gt 0 ] && profilec canary "${common[@]}" --format json >"$out/canary.json"; then
  cj=(--canary-json "$out/canary.json")
fi
# The launchers section needs the end-to-end matrix; this script does not run it (about a
# minute): run `profilec e2e --out out/example/matrix.json` first to have it in the report.
if [ -f "$out/matrix.json" ]; then
  cj+=(--e2e-matrix "$out/matrix.json")
fi
for fmt in md html; do
  profilec audit "${common[@]}" "${cj[@]}" --format "$fmt" --out "$out/audit.$fmt"
  echo "report: $out/audit.$fmt"
done
profilec explain "$dir/agent/codex-home/auth.json" --mode agent "${common[@]}"
