#!/usr/bin/env bash
# The whole test suite on a fresh machine: installs what the real tests need (apt, npm, pip),
# starts a Docker engine if none answers, then runs pytest over every marker. With CI=true a
# missing engine or tool fails the tests that need it instead of skipping them.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet --disable-pip-version-check -e '.[dev]'
if [ -f .ci/tools.sh ]; then bash .ci/tools.sh; fi
python3 -m pytest "$@"
