#!/usr/bin/env bash
# Runs test/compat/hebbs_sdk_test.py — the real `hebbs` Python SDK (PyPI hebbs==0.4.1) against a
# running Flashbulb — in a throwaway virtual environment kept in a cache directory and reused
# while it holds the right versions.
#
#   FLASHBULB_HOST=127.0.0.1 FLASHBULB_GRPC_PORT=6380 FLASHBULB_API_KEY=fb_admin_… test/compat/run.sh [-k NAME]
#
# Environment:
#   FLASHBULB_HOST, FLASHBULB_GRPC_PORT    the server (default 127.0.0.1:6380)
#   FLASHBULB_API_KEY                      an admin key; leave unset when authentication is off
#   FLASHBULB_WORKSPACE, FLASHBULB_WORKSPACE_KEY   optional: a second workspace and its key (tenant checks)
#   HEBBS_VENV                             the virtual environment (default node_modules/.cache/hebbs-venv)
#   PYTHON                                 the interpreter that creates it (default python3)
#
# The SDK's metadata asks for grpcio>=1.60 and protobuf>=4.25, but its generated code refuses to
# import with less than grpcio 1.78.0 (hebbs/_generated/hebbs_pb2_grpc.py GRPC_GENERATED_VERSION)
# and protobuf 6.31.1 (hebbs_pb2.py ValidateProtobufRuntimeVersion(6, 31, 1)): those floors are
# pinned here. Exit status: that of the test (0 = every test passed); 2 = the environment could
# not be prepared.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="${HEBBS_VENV:-$root/node_modules/.cache/hebbs-venv}"
python="${PYTHON:-python3}"
requirements=('hebbs==0.4.1' 'grpcio>=1.78' 'protobuf>=6.31.1')

# Succeeds when the venv exists and holds the SDK and runtimes the generated code needs.
venv_ok() {
  [ -x "$venv/bin/python" ] || return 1
  "$venv/bin/python" - <<'PY' >/dev/null 2>&1
from importlib.metadata import version
def v(s): return tuple(int(p) for p in s.split(".")[:3] if p.isdigit())
assert version("hebbs") == "0.4.1"
assert v(version("grpcio")) >= (1, 78)
assert v(version("protobuf")) >= (6, 31, 1)
import hebbs._generated.hebbs_pb2, hebbs._generated.hebbs_pb2_grpc  # fails on a too-old runtime
from hebbs import HebbsClient
PY
}

mkdir -p "$(dirname "$venv")"
# One builder at a time (flock where available).
exec 9>"$venv.lock"
if command -v flock >/dev/null 2>&1; then flock 9; fi

if ! venv_ok; then
  echo "compat: creating $venv (hebbs 0.4.1, grpcio>=1.78, protobuf>=6.31.1)" >&2
  rm -rf "$venv"
  if ! "$python" -m venv "$venv"; then
    echo "compat: '$python -m venv' failed (is the venv module / python3-venv installed?)" >&2
    exit 2
  fi
  if ! "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input "${requirements[@]}"; then
    echo "compat: pip install ${requirements[*]} failed" >&2
    rm -rf "$venv"
    exit 2
  fi
  if ! venv_ok; then
    echo "compat: the installed SDK does not import (see: $venv/bin/python -c 'import hebbs._generated.hebbs_pb2_grpc')" >&2
    exit 2
  fi
fi
exec 9>&-

# Flashbulb's schema, compiled by the same loader the server uses, for the field-by-field check
# against the descriptor the SDK was generated from.
descriptor="$(mktemp "${TMPDIR:-/tmp}/flashbulb-hebbs-desc.XXXXXX")"
trap 'rm -f "$descriptor"' EXIT
(
  cd "$root"
  node --input-type=module -e '
    import { writeFileSync } from "node:fs";
    import * as loader from "@grpc/proto-loader";
    const def = loader.loadSync("proto/hebbs.proto", { keepCase: true });
    const files = def["hebbs.v1.Memory"].fileDescriptorProtos;
    // FileDescriptorSet { repeated FileDescriptorProto file = 1; }
    const parts = [];
    for (const f of files) {
      const len = [];
      let n = f.length;
      do { let b = n & 0x7f; n >>>= 7; if (n) b |= 0x80; len.push(b); } while (n);
      parts.push(Buffer.from([0x0a, ...len]), f);
    }
    writeFileSync(process.argv[1], Buffer.concat(parts));
  ' "$descriptor"
)

"$venv/bin/python" "$here/hebbs_sdk_test.py" --descriptor "$descriptor" "$@"
