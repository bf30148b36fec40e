#!/usr/bin/env bash
# Schema-driven fuzzing of the REST API from its own OpenAPI document (schemathesis, from PyPI).
# Starts the built server (dist/) on a fresh data dir with auth on and the hash embedder, creates
# an admin key offline, and runs schemathesis against GET /v1/openapi.json: no 5xx, status codes,
# content types and bodies as documented. Bounded: examples per operation and a time budget.
#   FUZZ_MAX_EXAMPLES (default 25) · FUZZ_MAX_TIME_S (default 240) · SCHEMATHESIS (the `st` to use)
set -euo pipefail
cd "$(dirname "$0")/.."
ST=${SCHEMATHESIS:-st}
DATA=$(mktemp -d)
PORT=$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
LOG="$DATA/server.log"
export FLASHBULB_DATA_DIR="$DATA/data" FLASHBULB_EMBEDDER=hash FLASHBULB_SHARDS=2 FLASHBULB_BIND=127.0.0.1 \
  FLASHBULB_HTTP_PORT=$PORT FLASHBULB_GRPC_PORT=0 FLASHBULB_DURABILITY=os \
  FLASHBULB_REFLECT_ENABLED=true FLASHBULB_CONTRADICTIONS_ENABLED=true
KEY=$(node dist/cli.js keys create --init --role admin --label fuzz)   # the key alone on stdout
node dist/cli.js serve >"$LOG" 2>&1 &
SERVER=$!
cleanup() { kill "$SERVER" 2>/dev/null || true; wait "$SERVER" 2>/dev/null || true; rm -rf "$DATA"; }
trap cleanup EXIT
node -e "(async()=>{for(let i=0;i<150;i++){try{if((await fetch(process.argv[1])).ok)return}catch{}await new Promise(r=>setTimeout(r,200))}process.exit(1)})()" "http://127.0.0.1:$PORT/v1/openapi.json" \
  || { echo "the server did not start:"; cat "$LOG"; exit 1; }
status=0
# Left out: the MCP endpoints (JSON-RPC, tested with the MCP SDK's own client), subscribe
# (an SSE stream stays open until closed; tested in test/integration/subscribe-*.test.ts) and
# import (a raw NDJSON body: schemathesis 4.32.5's coverage phase fails inside itself on it;
# tested line by line in test/integration/export-import.test.ts).
"$ST" --config-file .ci/schemathesis.toml run "http://127.0.0.1:$PORT/v1/openapi.json" \
  --header "Authorization: Bearer $KEY" \
  --checks not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance \
  --exclude-operation-id-regex '^(mcp|subscribe$|subscribe_in_workspace$|import$|import_in_workspace$)' \
  --max-examples "${FUZZ_MAX_EXAMPLES:-25}" --max-time "${FUZZ_MAX_TIME_S:-240}" \
  --request-timeout 10 --workers 2 --seed 13 --no-color 2>&1 \
  | sed -E '/^=+ .* in [0-9.]+s =+$/d' || status=$?
# (sed drops schemathesis's closing banner, "=== 2 warnings in 20.01s ===": CI's log reader takes it
# for pytest's closing line of a run that executed no test, and recorded landings as having run none.)
if grep -q "failed:" "$LOG"; then echo "server logged unexpected failures:"; grep -A5 "failed:" "$LOG" | head -40; status=1; fi
exit $status
