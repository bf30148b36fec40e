#!/usr/bin/env python3
"""Generates src/flashbulb/_generated.py from Flashbulb's OpenAPI document.

One method per REST operation, on a synchronous and an asynchronous base class: path
parameters are positional, query parameters and the JSON body's fields are keyword-only
arguments named exactly as on the wire. A field left out is not sent; ``None`` sends ``null``
(several fields mean something by ``null``, such as ``ttl_s=None``: "no expiry"). Operations
that stream or are not JSON (subscribe, upload, export, import, MCP) are written by hand in
``_client.py``; ``HAND_WRITTEN`` names them so the coverage test knows.

    python3 scripts/generate.py [openapi.json] [src/flashbulb/_generated.py]

Only the standard library is used. The default input is the document the TypeScript client
keeps (``clients/typescript/openapi.json``, written by ``npm run client:generate``).
"""
from __future__ import annotations

import json
import keyword
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DEFAULT_IN = HERE.parent.parent / "typescript" / "openapi.json"
DEFAULT_OUT = HERE.parent / "src" / "flashbulb" / "_generated.py"

#: Operations written by hand (streams, multipart, NDJSON) or not REST at all (MCP).
HAND_WRITTEN = {"subscribe": "subscribe", "upload": "upload", "export": "export", "import": "import_"}
NOT_REST = {"mcp", "mcp_v1"}
REF = "#/components/schemas/"


def py_type(schema: Any) -> str:
    """A Python annotation for the JSON Schema subset the server emits."""
    if not isinstance(schema, dict):
        return "Any"
    if "$ref" in schema:
        return "dict[str, Any]"
    if "const" in schema:
        return f"Literal[{json.dumps(schema['const'])}]"
    if isinstance(schema.get("enum"), list):
        return f"Literal[{', '.join(json.dumps(v) for v in schema['enum'])}]"
    alts = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(alts, list):
        return union([py_type(a) for a in alts])
    kind = schema.get("type")
    if isinstance(kind, list):
        return union([py_type({**schema, "type": k}) for k in kind])
    simple = {"string": "str", "number": "float", "integer": "int", "boolean": "bool", "null": "None"}
    if kind in simple:
        return simple[kind]
    if kind == "array":
        return f"list[{py_type(schema.get('items'))}]"
    if kind == "object" or "properties" in schema:
        return "dict[str, Any]"
    return "Any"


def union(types: list[str]) -> str:
    seen: list[str] = []
    for t in types:
        for part in t.split(" | "):
            if part not in seen:
                seen.append(part)
    if "Any" in seen:
        return "Any"
    if "None" in seen:  # None last reads best
        seen = [t for t in seen if t != "None"] + ["None"]
    return " | ".join(seen)


def ident(name: str) -> str:
    return f"{name}_" if keyword.iskeyword(name) else name


def operations(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Every operation of the document (workspace-prefixed twins left out: the client adds the prefix)."""
    out = []
    for path, item in doc["paths"].items():
        for method in ("get", "post", "put", "delete", "patch"):
            op = item.get(method)
            if not op or op["operationId"].endswith("_in_workspace"):
                continue
            twin = doc["paths"].get(path.replace("/v1/", "/v1/workspaces/{workspace}/", 1), {})
            status = next(s for s in op["responses"] if s.startswith("2"))
            content = op["responses"][status].get("content", {})
            kind = "json" if "application/json" in content else "text" if any(
                c.startswith("text/") and c != "text/event-stream" for c in content) else "none"
            body = op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
            out.append({
                "id": op["operationId"], "method": method.upper(), "path": path,
                "scoped": path.startswith("/v1/") and method in twin,
                "summary": op.get("summary", ""), "deprecated": op.get("deprecated", False),
                "params": [p["name"] for p in op.get("parameters", []) if p["in"] == "path"],
                "query": [p for p in op.get("parameters", []) if p["in"] == "query"],
                "body": body, "response": kind,
            })
    return out


def signature(op: dict[str, Any]) -> tuple[str, str]:
    """The method's parameter list and the call that forwards them."""
    params = [f"{ident(p)}: str" for p in op["params"]]
    required: list[str] = []
    optional: list[str] = []
    query_names: list[str] = []
    for q in op["query"]:
        query_names.append(q["name"])
        t = py_type(q.get("schema"))
        (required if q.get("required") else optional).append(
            f"{ident(q['name'])}: {t}" if q.get("required") else f"{ident(q['name'])}: {t} | NotGiven = NOT_GIVEN")
    body = op["body"] or {}
    body_names = list(body.get("properties", {}))
    needed = set(body.get("required", []))
    for name, prop in body.get("properties", {}).items():
        t = py_type(prop)
        if name in needed:
            required.append(f"{ident(name)}: {t}")
        else:
            optional.append(f"{ident(name)}: {t} | NotGiven = NOT_GIVEN")
    keyword_only = required + optional + ["options: RequestOptions | None = None"]
    args = ", ".join(["self", *params, "*", *keyword_only])
    call = [f"{op['id']!r}"]
    if op["params"]:
        call.append("params={" + ", ".join(f"{p!r}: {ident(p)}" for p in op["params"]) + "}")
    if query_names:
        call.append("query=_fields(" + ", ".join(f"{n}={ident(n)}" for n in query_names) + ")")
    if op["body"] is not None:
        call.append("body=_fields(" + ", ".join(f"{n}={ident(n)}" for n in body_names) + ")")
    call.append("options=options")
    return args, ", ".join(call)


def returns(op: dict[str, Any]) -> str:
    return {"json": "Any", "text": "str", "none": "None"}[op["response"]]


def method(op: dict[str, Any], is_async: bool) -> list[str]:
    args, call = signature(op)
    doc = f"{op['summary']} (``{op['method']} {op['path']}``)."
    if op["deprecated"]:
        doc += " Deprecated."
    head = "async def" if is_async else "def"
    run = "await self._call" if is_async else "self._call"
    return [
        f"    {head} {ident(op['id'])}({args}) -> {returns(op)}:",
        f'        """{doc}"""',
        f"        return {run}({call})",
        "",
    ]


def generate(doc: dict[str, Any]) -> str:
    ops = operations(doc)
    lines = [
        f"# GENERATED by clients/python/scripts/generate.py from the OpenAPI document (Flashbulb {doc['info']['version']}).",
        "# Do not edit: run `npm run client:generate` in the repository root after changing a route.",
        '"""One method per REST operation, synchronous and asynchronous (generated)."""',
        "from __future__ import annotations",
        "",
        "from typing import Any, Literal",
        "",
        "from ._transport import NOT_GIVEN, AsyncTransport, NotGiven, Operation, RequestOptions, SyncTransport, _fields",
        "",
        "__all__ = ['OPERATIONS', 'HAND_WRITTEN', 'NOT_REST', 'GeneratedSync', 'GeneratedAsync']",
        "",
        "#: Every operation of the document: method, path, whether the workspace prefix applies, reply kind.",
        "OPERATIONS: dict[str, Operation] = {",
    ]
    for op in ops:
        lines.append(f"    {op['id']!r}: Operation({op['method']!r}, {op['path']!r}, scoped={op['scoped']}, response={op['response']!r}),")
    lines += [
        "}",
        "",
        "#: Operations written by hand in _client.py (operation id -> method name).",
        f"HAND_WRITTEN: dict[str, str] = {json.dumps(HAND_WRITTEN)}",
        "#: Operations that are not REST calls (MCP has its own clients).",
        f"NOT_REST: frozenset[str] = frozenset({sorted(NOT_REST)!r})",
        "",
    ]
    generated = [op for op in ops if op["id"] not in HAND_WRITTEN and op["id"] not in NOT_REST]
    for cls, base, is_async in (("GeneratedSync", "SyncTransport", False), ("GeneratedAsync", "AsyncTransport", True)):
        lines += ["", f"class {cls}({base}):", f'    """Flashbulb\'s REST operations ({"asynchronous" if is_async else "synchronous"})."""', ""]
        for op in generated:
            lines += method(op, is_async)
    return "\n".join(lines).rstrip() + "\n"


def main(argv: list[str]) -> int:
    src = Path(argv[1]) if len(argv) > 1 else DEFAULT_IN
    dst = Path(argv[2]) if len(argv) > 2 else DEFAULT_OUT
    dst.write_text(generate(json.loads(src.read_text(encoding="utf-8"))), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
