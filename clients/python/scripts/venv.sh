#!/usr/bin/env bash
# Prepares the Python client's development environment and prints its python's path: a virtual
# environment in a cache directory with the package installed editable and its test and codegen
# extras, made again only when pyproject.toml changes (concurrent callers wait on a lock).
#
#   py="$(clients/python/scripts/venv.sh)"
#
# Environment: FLASHBULB_PY_VENV (default node_modules/.cache/flashbulb-py-venv), PYTHON (python3).
# Exit status: 0, or 2 when the environment could not be prepared (the reason on stderr).
set -euo pipefail
pkg="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
root="$(cd "$pkg/../.." && pwd)"
venv="${FLASHBULB_PY_VENV:-$root/node_modules/.cache/flashbulb-py-venv}"
python="${PYTHON:-python3}"
stamp="$venv/.deps-$(sha256sum "$pkg/pyproject.toml" | cut -c1-16)"

mkdir -p "$(dirname "$venv")"
exec 9>"$venv.lock"
if command -v flock >/dev/null 2>&1; then flock 9; fi
if [ ! -f "$stamp" ]; then
  echo "python client: preparing $venv" >&2
  rm -rf "$venv"
  "$python" -m venv "$venv" >&2 || { echo "python client: '$python -m venv' failed" >&2; exit 2; }
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input -e "$pkg[test,codegen]" >&2 \
    || { echo "python client: pip install failed" >&2; rm -rf "$venv"; exit 2; }
  touch "$stamp"
fi
echo "$venv/bin/python"
