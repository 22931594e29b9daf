#!/usr/bin/env bash
# Test what ships: build the sdist and, from it, the wheel (what `python -m build` and pip do),
# install the wheel into a fresh venv outside the checkout, and from a directory outside the
# checkout (so nothing imports from the source tree) run
#   1. the main job on the bundled example (examples/run.sh with PROFILEC=<venv>/bin/profilec:
#      compile, check, plan, lock, canary and audit; the canaries run when Docker answers, and
#      with WHEEL_SMOKE_CANARY=1 a canary that cannot run fails this script),
#   2. the pre-commit hooks through `pre-commit try-repo <checkout> <hook> --all-files` in a
#      scratch git repository holding the example's roots manifest,
#   3. the GitHub Action's run steps (action.yml) as a script (scripts/run_action.py), which
#      installs profilec from the action's own path as the action does on a runner.
# Usage: scripts/wheel-smoke.sh [WORKDIR]   (default: a new temp dir, removed at the end)
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
if [ -n "${1:-}" ]; then
  work="$1"; mkdir -p "$work"; keep=1
else
  work="$(mktemp -d "${TMPDIR:-/var/tmp}/profilec-wheel.XXXXXX")"; keep=0
fi
work="$(cd "$work" && pwd)"
case "$work/" in "$repo"/*) echo "wheel-smoke: WORKDIR must lie outside the checkout" >&2; exit 2 ;; esac
[ "$keep" = 1 ] || trap 'rm -rf "$work"' EXIT
step() { echo "wheel-smoke: $* ($(( SECONDS ))s)"; }
pip_q=(--quiet --disable-pip-version-check)

# --- build: sdist, then the wheel from the sdist ----------------------------------------------
step "build sdist and wheel"
python3 -m build --outdir "$work/dist" "$repo" >"$work/build.log" 2>&1 || {
  tail -n 40 "$work/build.log" >&2; echo "wheel-smoke: build failed" >&2; exit 1; }
sdist="$(compgen -G "$work/dist/profilec-*.tar.gz")"
wheel="$(compgen -G "$work/dist/profilec-*-py3-none-any.whl")"
python3 - "$wheel" "$sdist" <<'PY'
"""What the artefacts hold: the package as `profilec`, its data, the LICENSE; nothing named
compiler, and no dev harness."""
import sys
import tarfile
import zipfile

wheel, sdist = sys.argv[1], sys.argv[2]
names = set(zipfile.ZipFile(wheel).namelist())
need = {
    "profilec/__init__.py",
    "profilec/py.typed",
    "profilec/data/profiles/modes.toml",
    "profilec/data/profiles/adapters.toml",
    "profilec/data/schemas/roots-manifest.schema.json",
    "profilec/data/canaries/seccomp.json",
}
missing = sorted(need - names)
stray = sorted(n for n in names if n.split("/")[0] in {"compiler", "profiles", "schemas", "tests"})
# The dev harness (harness/: differential tester, Codex oracle) never ships, under any name.
stray += sorted(
    n
    for n in names
    if n.split("/")[0] == "harness"
    or n.startswith(("profilec/difftest/", "profilec/codex_oracle"))
)
lic = [n for n in names if n.endswith(".dist-info/licenses/LICENSE")]
members = tarfile.open(sdist).getnames()
if not any(m.endswith("/compiler/data/schemas/roots-manifest.schema.json") for m in members):
    missing.append("sdist: compiler/data/schemas")
if missing or stray or not lic:
    sys.exit(f"wheel-smoke: artefacts: missing {missing}, stray {stray}, licence {lic}")
print(f"wheel-smoke: wheel holds {len(names)} files, data and LICENSE included")
PY

# --- a fresh venv outside the checkout -------------------------------------------------------
step "install the wheel into a fresh venv"
venv="$work/venv"
python3 -m venv "$venv"
"$venv/bin/pip" install "${pip_q[@]}" "$wheel[canary]"
mkdir -p "$work/run"
cd "$work/run"
"$venv/bin/python" - "$venv" <<'PY'
import os
import sys

import profilec
from profilec import resources

venv = os.path.realpath(sys.argv[1])
for path in (profilec.__file__, str(resources.schemas_dir())):
    if not os.path.realpath(path).startswith(venv + os.sep):
        sys.exit(f"wheel-smoke: {path} is not inside the venv {venv}")
print(f"wheel-smoke: profilec imports from {os.path.dirname(profilec.__file__)}")
PY
# `python -m profilec` is the installed CLI too (issue 22).
"$venv/bin/python" -m profilec --version | grep -q '^profilec ' || {
  echo "wheel-smoke: python -m profilec --version failed" >&2; exit 1; }

# --- 1. the main job on the bundled example ---------------------------------------------------
step "main job (examples/run.sh) with the installed profilec"
PROFILEC="$venv/bin/profilec" PROFILEC_PYTHON="$venv/bin/python" \
  PROFILEC_EXAMPLE_OUT="$work/run/out" bash "$repo/examples/run.sh" >"$work/main.log" 2>&1 || {
  rc=$?; tail -n 40 "$work/main.log" >&2; echo "wheel-smoke: main job failed (exit $rc)" >&2
  exit 1; }
for f in profiles.toml profiles.bundle.json codex-home/config.toml plan.json plan.bwrap \
         profilec.lock check.json audit.md audit.html; do
  [ -s "$work/run/out/$f" ] || { echo "wheel-smoke: main job wrote no $f" >&2; exit 1; }
done
# CI has Docker: there a canary that cannot run fails the smoke test (never a silent skip).
need_canary="${WHEEL_SMOKE_CANARY:-$([ "${CI:-}" = true ] && echo 1 || echo 0)}"
if [ "$need_canary" = 1 ]; then
  [ -s "$work/run/out/canary.json" ] || {
    tail -n 40 "$work/main.log" >&2; echo "wheel-smoke: the canaries did not run" >&2; exit 1; }
  grep -q 'canary' "$work/run/out/audit.md" || {
    echo "wheel-smoke: the audit report carries no canary section" >&2; exit 1; }
fi
step "main job passed (canary: $([ -s "$work/run/out/canary.json" ] && echo ran || echo skipped))"

# --- 2. the pre-commit hooks through try-repo ------------------------------------------------
step "pre-commit try-repo"
"$venv/bin/pip" install "${pip_q[@]}" pre-commit
scratch="$work/precommit"
lay="$(bash "$repo/examples/make-layout.sh" "$work/precommit-layout")"
mkdir -p "$scratch"
cp "$lay/roots.toml" "$scratch/roots.toml"
chmod 600 "$scratch/roots.toml"
git -C "$scratch" init -q
git -C "$scratch" add roots.toml
git -C "$scratch" -c user.name=smoke -c user.email=smoke@localhost commit -q -m manifest
(
  cd "$scratch"
  export PRE_COMMIT_HOME="$work/pre-commit-home"
  "$venv/bin/pre-commit" try-repo "$repo" profilec-check --all-files >"$work/precommit.log" 2>&1
) || { cat "$work/precommit.log" >&2; echo "wheel-smoke: pre-commit hook failed" >&2; exit 1; }
grep -q 'Passed' "$work/precommit.log" || {
  cat "$work/precommit.log" >&2; echo "wheel-smoke: the hook did not run" >&2; exit 1; }

# --- 3. the GitHub Action's steps --------------------------------------------------------------
# Against a config with findings: check fails the step (exit 1), the SARIF is still written with
# the results, and the upload step still runs (if: always()).
step "action.yml run steps"
printf 'sandbox_mode = "danger-full-access"\n' >"$lay/bad-config.toml"
set +e
"$venv/bin/python" "$repo/scripts/run_action.py" --action "$repo/action.yml" \
  --workdir "$lay" --temp "$work/action-temp" \
  --input roots="$lay/roots.toml" --input workspace-root="$lay/workspace" \
  --input args="--config $lay/bad-config.toml" \
  --input sarif="$work/run/profilec.sarif" >"$work/action.json" 2>"$work/action.log"
rc=$?
set -e
"$venv/bin/python" - "$work/action.json" "$work/run/profilec.sarif" "$rc" <<'PY' || {
import json
import sys

doc = json.load(open(sys.argv[1]))
steps = {s["id"]: s for s in doc["steps"]}
assert int(sys.argv[3]) == 1, f"action exit {sys.argv[3]}, expected 1 (findings)"
assert steps["install"]["exit_code"] == 0, steps["install"]
assert steps["check"]["exit_code"] == 1, steps["check"]
assert steps["upload"]["skipped"] == "uses: steps need GitHub", steps["upload"]
assert steps["upload"]["with"]["sarif_file"] == sys.argv[2]
log = json.load(open(sys.argv[2]))
assert log["version"] == "2.1.0" and log["runs"][0]["results"], "no results in the SARIF"
print(f"wheel-smoke: action: check exit 1, {len(log['runs'][0]['results'])} SARIF results, upload runs")
PY
  cat "$work/action.log" "$work/action.json" >&2; echo "wheel-smoke: action steps failed" >&2; exit 1; }
step "all passed"
