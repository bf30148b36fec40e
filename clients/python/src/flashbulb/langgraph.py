"""LangGraph long-term memory on Flashbulb: ``FlashbulbStore(client)`` implements
``langgraph.store.base.BaseStore`` (``pip install "flashbulb[langgraph]"``).

How an item is kept — one Flashbulb memory per (namespace, key), in the client's workspace:

- ``entity_id`` is the namespace joined with ``/`` (``%`` and ``/`` inside a part escaped), so
  ``list_namespaces`` reads the workspace's entities and one namespace's items are one entity's
  memories. Give the store a workspace of its own (``client.with_workspace("agent-x")``): every
  entity of that workspace reads as a namespace.
- ``context`` holds ``{"langgraph": {"key", "depth", "p0", "p1", …}, "value": value}``; ``p<i>``
  are the namespace's parts, so a namespace prefix is an equality filter on them, and a search
  ``filter`` on the value's fields becomes a filter on ``context.value.<field>`` (``$eq``, ``$ne``,
  ``$gt``, ``$gte``, ``$lt``, ``$lte`` have the same meaning in both).
- ``content`` — the text Flashbulb embeds and indexes for hybrid search — is the value's fields
  named by ``index`` (a list of top-level fields), or the whole value as JSON; ``index=False``
  stores the key as the text, so the item is found by filters but not by meaning.
- A put on an existing key is a ``revise`` (the memory keeps its id and the old state as a
  superseded version); ``put(..., None)`` and ``delete`` are a ``forget``.
- ``ttl`` (minutes) becomes the memory's ``ttl_s``; Flashbulb erases expired memories. Reads do
  not refresh it (a refresh would be a revision per read): it counts from the last put.
- ``search(query=…)`` is a hybrid ``recall`` (similarity) with those filters; ``SearchItem.score``
  is its ``relevance``. Without a query, items come oldest first.
"""
from __future__ import annotations

import asyncio
import json
from datetime import datetime, timezone
from typing import Any, Iterable

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from ._client import Flashbulb

__all__ = ["FlashbulbStore"]

_OPS = frozenset({"$eq", "$ne", "$gt", "$gte", "$lt", "$lte"})
_PAGE = 500


def encode_namespace(namespace: tuple[str, ...]) -> str:
    return "/".join(part.replace("%", "%25").replace("/", "%2F") for part in namespace)


def decode_namespace(entity: str) -> tuple[str, ...]:
    return tuple(part.replace("%2F", "/").replace("%25", "%") for part in entity.split("/"))


def _time(us: int) -> datetime:
    return datetime.fromtimestamp(us / 1_000_000, tz=timezone.utc)


def _text(key: str, value: dict[str, Any], index: Any) -> str:
    if index is False:
        return key
    if isinstance(index, list) and index:
        parts = [value.get(f) for f in index]
        text = " ".join(p if isinstance(p, str) else json.dumps(p, ensure_ascii=False) for p in parts if p is not None)
        return text or key
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _namespace_filter(prefix: tuple[str, ...]) -> dict[str, Any]:
    return {f"context.langgraph.p{i}": part for i, part in enumerate(prefix)}


def _value_filter(filter: dict[str, Any] | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for field, cond in (filter or {}).items():
        if isinstance(cond, dict) and cond and all(k in _OPS for k in cond):
            out[f"context.value.{field}"] = cond
        elif isinstance(cond, (dict, list)):
            raise ValueError(f"filter.{field}: only scalars and $eq/$ne/$gt/$gte/$lt/$lte are supported")
        else:
            out[f"context.value.{field}"] = cond
    return out


def _fields(memory: dict[str, Any]) -> dict[str, Any]:
    ctx = memory["context"]
    return dict(value=ctx.get("value", {}), key=ctx["langgraph"]["key"], namespace=decode_namespace(memory["entity_id"]),
                created_at=_time(memory["created_at"]), updated_at=_time(memory["updated_at"]))


def _item(memory: dict[str, Any]) -> Item:
    return Item(**_fields(memory))


def _search_item(memory: dict[str, Any], score: float | None) -> SearchItem:
    return SearchItem(**_fields(memory), score=score)


def _matches(namespace: tuple[str, ...], condition: MatchCondition) -> bool:
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    pairs = zip(namespace, path) if condition.match_type == "prefix" else zip(reversed(namespace), reversed(path))
    return all(p == "*" or n == p for n, p in pairs)


class FlashbulbStore(BaseStore):
    """A LangGraph ``BaseStore`` over a :class:`flashbulb.Flashbulb` client (see the module's notes)."""

    supports_ttl = True

    def __init__(self, client: Flashbulb) -> None:
        self.client = client

    # -- BaseStore -------------------------------------------------------------------------
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        return [self._run(op) for op in ops]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """The same operations, run on a worker thread (the sync client is thread-safe)."""
        return await asyncio.to_thread(self.batch, list(ops))

    # -- one operation ---------------------------------------------------------------------
    def _run(self, op: Op) -> Result:
        if isinstance(op, GetOp):
            memory = self._find(op.namespace, op.key)
            return _item(memory) if memory else None
        if isinstance(op, PutOp):
            return self._put(op)
        if isinstance(op, SearchOp):
            return self._search(op)
        if isinstance(op, ListNamespacesOp):
            return self._list_namespaces(op)
        raise ValueError(f"unknown operation {type(op).__name__}")

    def _find(self, namespace: tuple[str, ...], key: str) -> dict[str, Any] | None:
        page = self.client.list(entity_id=encode_namespace(namespace), limit=1,
                                filter=json.dumps({"context.langgraph.key": key}))
        return page["memories"][0] if page["memories"] else None

    def _put(self, op: PutOp) -> None:
        existing = self._find(op.namespace, op.key)
        if op.value is None:
            if existing:
                self.client.forget(memory_ids=[existing["memory_id"]])
            return None
        meta: dict[str, Any] = {"key": op.key, "depth": len(op.namespace)}
        meta.update({f"p{i}": part for i, part in enumerate(op.namespace)})
        context = {"langgraph": meta, "value": op.value}
        fields: dict[str, Any] = {"content": _text(op.key, op.value, op.index), "context": context}
        if op.ttl is not None:
            fields["ttl_s"] = op.ttl * 60
        if existing:
            if op.ttl is None:
                fields["expires_at_us"] = None
            self.client.revise(existing["memory_id"], context_mode="replace", **fields)
        else:
            self.client.remember(entity_id=encode_namespace(op.namespace), **fields)
        return None

    def _search(self, op: SearchOp) -> list[SearchItem]:
        flt = {**_namespace_filter(op.namespace_prefix), **_value_filter(op.filter), "context.langgraph.key": {"$exists": True}}
        if op.query:
            hits = self.client.recall(cue=op.query, strategies=["similarity"], top_k=op.offset + op.limit, filter=flt)["results"]
            return [_search_item(h["memory"], h["relevance"]) for h in hits[op.offset:]]
        items: list[SearchItem] = []
        cursor: str | None = None
        wanted = op.offset + op.limit
        while len(items) < wanted:
            args: dict[str, Any] = {"filter": json.dumps(flt), "limit": min(_PAGE, wanted - len(items))}
            if cursor:
                args["cursor"] = cursor
            page = self.client.list(**args)
            items += [_search_item(m, None) for m in page["memories"]]
            cursor = page.get("next_cursor")
            if not cursor:
                break
        return items[op.offset:wanted]

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        namespaces = [decode_namespace(e) for e in self.client.entities()]
        namespaces = [ns for ns in namespaces if all(_matches(ns, c) for c in op.match_conditions or ())]
        if op.max_depth is not None:
            namespaces = [ns[: op.max_depth] for ns in namespaces]
        return sorted(set(namespaces))[op.offset: op.offset + op.limit]
