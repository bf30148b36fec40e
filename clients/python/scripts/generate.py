#!/usr/bin/env python3
"""Generates src/flashbulb/_generated.py and src/flashbulb/models.py from Flashbulb's OpenAPI document.

One method per REST operation, on a synchronous and an asynchronous base class: path
parameters are positional, query parameters and the JSON body's fields are keyword-only
arguments named exactly as on the wire. A field left out is not sent; ``None`` sends ``null``
(several fields mean something by ``null``, such as ``ttl_s=None``: "no expiry"). Operations
that stream or are not JSON (subscribe, upload, export, import, MCP) are written by hand in
``_client.py``; ``HAND_WRITTEN`` names them so the coverage test knows.

Replies are pydantic models (``models.py``), one per operation (``RecallResponse``, named as in
the TypeScript client) plus the document's shared schemas (``Memory``, ``RecallHit``, …), written
by datamodel-code-generator (pinned in the package's ``codegen`` extra) from the replies' JSON
Schemas. The schemas are loosened first so that a client keeps reading a newer server: an enum
is open (``Literal[...] | str``), a union of objects ends with ``dict[str, Any]`` (a variant it
does not know), the server's range and length checks are dropped (the client types replies; it
does not re-validate them), a JSON number stays ``int`` when it is one, and every model keeps
fields it does not know (``extra="allow"``).

    python3 scripts/generate.py [openapi.json] [src/flashbulb]

The methods need only the standard library; the models need datamodel-code-generator (run
through ``scripts/generate.sh``, which prepares the package's virtual environment). The default
input is the document the TypeScript client keeps (``clients/typescript/openapi.json``, written
by ``npm run client:generate``).
"""
from __future__ import annotations

import json
import keyword
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DEFAULT_IN = HERE.parent.parent / "typescript" / "openapi.json"
DEFAULT_OUT_DIR = HERE.parent / "src" / "flashbulb"
DEFAULT_OUT = DEFAULT_OUT_DIR / "_generated.py"
MODELS_OUT = DEFAULT_OUT_DIR / "models.py"

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
            reply = content.get("application/json", {}).get("schema") if kind == "json" else None
            out.append({
                "id": op["operationId"], "method": method.upper(), "path": path,
                "scoped": path.startswith("/v1/") and method in twin,
                "summary": op.get("summary", ""), "deprecated": op.get("deprecated", False),
                "params": [p["name"] for p in op.get("parameters", []) if p["in"] == "path"],
                "query": [p for p in op.get("parameters", []) if p["in"] == "query"],
                "body": body, "response": kind, "reply": reply,
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
    if reply_model(op):
        call.append(f"reply=models.{reply_model(op)}")
    call.append("options=options")
    return args, ", ".join(call)


def pascal(op_id: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in op_id.split("_"))


def reply_model(op: dict[str, Any]) -> str | None:
    """The models.py name of the operation's JSON reply (``RecallResponse``), if it has a schema."""
    return f"{pascal(op['id'])}Response" if op["response"] == "json" and op.get("reply") is not None else None


def returns(op: dict[str, Any]) -> str:
    model = reply_model(op)
    if model:
        return f"models.{model}"
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
        "from . import models",
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


# -- reply models --------------------------------------------------------------------------
#: Keywords that check a value rather than describe its type: the server enforces them on what it
#: sends; a client that re-checked them would only fail on a newer server.
CHECKS = frozenset({
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength", "pattern",
    "minItems", "maxItems", "uniqueItems", "multipleOf", "minProperties", "maxProperties", "patternProperties",
})


def loosen(schema: Any) -> Any:
    """A reply schema as the client reads it (see the module's notes): refs into ``$defs``, open
    enums, no range or length checks, numbers that stay ``int`` when they are one."""
    if isinstance(schema, list):
        return [loosen(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in CHECKS:
            continue
        if key == "$ref" and isinstance(value, str):
            out[key] = value.replace(REF, "#/$defs/")
        elif key in ("properties", "$defs", "definitions") and isinstance(value, dict):
            out[key] = {name: loosen(sub) for name, sub in value.items()}
        else:
            out[key] = loosen(value)
    if schema.get("patternProperties") and "additionalProperties" not in schema:
        values = list(schema["patternProperties"].values())
        out["additionalProperties"] = loosen(values[0]) if len(values) == 1 else True
    if isinstance(out.get("enum"), list) and all(isinstance(v, str) for v in out["enum"]):
        enum = {k: out.pop(k) for k in ("enum", "type") if k in out}
        out["anyOf"] = [{"enum": enum["enum"]}, {"type": "string"}]
    alts = out.get("anyOf")
    if isinstance(alts, list) and alts and all(isinstance(a, dict) and isinstance(a.get("const"), str) for a in alts):
        out["anyOf"] = [{"enum": [a["const"] for a in alts]}, {"type": "string"}]  # a union of literals is an enum
    for key in ("anyOf", "oneOf"):
        alts = out.get(key)
        if isinstance(alts, list) and len(alts) > 1 and all(isinstance(a, dict) and (a.get("type") == "object" or "$ref" in a) for a in alts):
            out[key] = [*alts, {"type": "object"}]  # a variant a newer server adds reads as a dict
    if out.get("type") == "number":
        out.pop("type")
        out["anyOf"] = [{"type": "integer"}, {"type": "number"}]
    return out


def shared(schema: Any, components: dict[str, Any], inside: str | None = None) -> Any:
    """The schema with every copy of a shared schema (the document inlines some) made a ``$ref``
    to it, so that a reply holding a memory holds a ``Memory``."""
    if isinstance(schema, list):
        return [shared(s, components, inside) for s in schema]
    if not isinstance(schema, dict):
        return schema
    for name, component in components.items():
        if name != inside and schema == component:
            return {"$ref": f"#/$defs/{name}"}
    return {k: shared(v, components, inside) for k, v in schema.items()}


def reply_bundle(doc: dict[str, Any]) -> dict[str, Any]:
    """One JSON Schema document whose ``$defs`` are the shared schemas and every JSON reply."""
    components = {name: loosen(s) for name, s in doc.get("components", {}).get("schemas", {}).items()}
    defs = {name: shared(s, components, name) for name, s in components.items()}
    for op in operations(doc):
        name = reply_model(op)
        if name:
            if name in defs:
                raise ValueError(f"{name}: a shared schema already has the reply's name")
            defs[name] = shared(loosen(op["reply"]), components)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": defs}


#: datamodel-code-generator's options: pydantic v2 models, literals for enums, type aliases for
#: replies that are not objects (``EntitiesResponse = list[str]``), unknown fields kept.
CODEGEN_ARGS = [
    "--input-file-type", "jsonschema", "--output-model-type", "pydantic_v2.BaseModel",
    "--target-python-version", "3.10", "--use-standard-collections", "--use-union-operator",
    "--enum-field-as-literal", "all", "--use-type-alias", "--extra-fields", "allow",
    "--use-field-description", "--use-schema-description", "--use-double-quotes",
    "--disable-timestamp", "--formatters", "black", "isort", "--use-exact-imports",
]


def models(doc: dict[str, Any]) -> str:
    """models.py: the reply models, written by datamodel-code-generator."""
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "replies.json", Path(tmp) / "models.py"
        src.write_text(json.dumps(reply_bundle(doc), indent=1), encoding="utf-8")
        run = subprocess.run([sys.executable, "-m", "datamodel_code_generator", "--input", str(src), "--output", str(dst), *CODEGEN_ARGS],
                             capture_output=True, text=True)
        if run.returncode != 0:
            raise RuntimeError(f"datamodel-code-generator failed ({run.returncode}): {run.stderr.strip()}")
        body = dst.read_text(encoding="utf-8")
    body = body.split("\n", 2)[2] if body.startswith("# generated by datamodel-codegen") else body
    # The bundle's root (only $defs) comes out as an alias of Any named Model: not a reply.
    body = body.replace('\nModel = TypeAliasType("Model", Any)\n', "")
    head = [
        f"# GENERATED by clients/python/scripts/generate.py (datamodel-code-generator) from the OpenAPI document (Flashbulb {doc['info']['version']}).",
        "# Do not edit: run `npm run client:generate` in the repository root after changing a route.",
        '"""The replies of Flashbulb\'s REST API as pydantic models (generated): one ``<Operation>Response``',
        "per operation (``RecallResponse``, ``Memory``, ``RecallHit``, …). Unknown fields are kept, enums are open",
        'and the server\'s range checks are not repeated, so a newer server\'s replies still read."""',
    ]
    return "\n".join(head) + "\n" + body.lstrip("\n")


def main(argv: list[str]) -> int:
    src = Path(argv[1]) if len(argv) > 1 else DEFAULT_IN
    out = Path(argv[2]) if len(argv) > 2 else DEFAULT_OUT_DIR
    doc = json.loads(src.read_text(encoding="utf-8"))
    (out / "_generated.py").write_text(generate(doc), encoding="utf-8")
    (out / "models.py").write_text(models(doc), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
