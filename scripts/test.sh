#!/usr/bin/env bash
# The test suite on a fresh machine: installs what the real tests need (apt, npm, pip), starts a
# Docker engine if none answers, then runs pytest over every marker but `dist` (that test builds
# the sdist and wheel: scripts/wheel-smoke.sh, which CI runs after this) in four pytest-xdist
# workers: most of the suite waits on containers and Codex processes, so four workers on two cores
# keep the CPU busy (worksteal: an idle worker takes queued tests from a busy one, so the slow
# canary and e2e tests do not pile up at the end). Arguments replace that default and go to
# pytest as they are (`bash scripts/test.sh -m dist`, `... tests/unit -q`).
# With CI=true a missing engine or tool fails the tests that need it instead of skipping them.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet --disable-pip-version-check -e '.[dev]'
if [ -f .ci/tools.sh ]; then bash .ci/tools.sh; fi
if [ "$#" -eq 0 ]; then set -- -m "not dist" -n 4 --dist worksteal; fi
python3 -m pytest "$@"
