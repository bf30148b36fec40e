#!/usr/bin/env bash
# Runs the Python client's tests (pytest) in the development environment scripts/venv.sh keeps
# (made again only when pyproject.toml changes). The tests start their own server from dist/
# (run `npm run build` first), or use FLASHBULB_URL / FLASHBULB_API_KEY when set.
#
#   clients/python/run-tests.sh [pytest args]
#
# Environment: FLASHBULB_PY_VENV (default node_modules/.cache/flashbulb-py-venv), PYTHON (python3).
# Exit status: pytest's; 2 when the environment could not be prepared.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
py="$(bash "$here/scripts/venv.sh")" || exit 2
cd "$here"
exec "$py" -m pytest -q -p no:cacheprovider "$@"
