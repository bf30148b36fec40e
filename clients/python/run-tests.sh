#!/usr/bin/env bash
# Runs the Python client's tests (pytest) in a virtual environment kept in a cache directory and
# reused while the package's dependencies are unchanged. The tests start their own server from
# dist/ (run `npm run build` first), or use FLASHBULB_URL / FLASHBULB_API_KEY when set.
#
#   clients/python/run-tests.sh [pytest args]
#
# Environment: FLASHBULB_PY_VENV (default node_modules/.cache/flashbulb-py-venv), PYTHON (python3).
# Exit status: pytest's; 2 when the environment could not be prepared.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="${FLASHBULB_PY_VENV:-$root/node_modules/.cache/flashbulb-py-venv}"
python="${PYTHON:-python3}"
stamp="$venv/.deps-$(sha256sum "$here/pyproject.toml" | cut -c1-16)"

mkdir -p "$(dirname "$venv")"
exec 9>"$venv.lock"
if command -v flock >/dev/null 2>&1; then flock 9; fi
if [ ! -f "$stamp" ]; then
  echo "python client: preparing $venv" >&2
  rm -rf "$venv"
  "$python" -m venv "$venv" || { echo "python client: '$python -m venv' failed" >&2; exit 2; }
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input -e "$here[test]" \
    || { echo "python client: pip install failed" >&2; rm -rf "$venv"; exit 2; }
  touch "$stamp"
fi
exec 9>&-
cd "$here"
exec "$venv/bin/python" -m pytest -q -p no:cacheprovider "$@"
