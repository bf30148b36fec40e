#!/usr/bin/env bash
# Regenerates src/flashbulb/_generated.py (methods) and src/flashbulb/models.py (reply models)
# from the OpenAPI document, in the environment scripts/venv.sh keeps (it holds the pinned
# datamodel-code-generator). `npm run client:generate` runs this after writing openapi.json.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
py="$(bash "$here/venv.sh")" || exit 2
exec "$py" "$here/generate.py" "$@"
