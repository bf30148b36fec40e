"""LangGraph long-term memory on Flashbulb: ``FlashbulbStore(client)`` implements
``langgraph.store.base.BaseStore`` (``pip install "flashbulb[langgraph]"``) over either client.

- Over :class:`flashbulb.Flashbulb` every method works; the async ones (``aput``, ``asearch``, …,
  what ``graph.ainvoke`` calls) run the sync client on a worker thread.
- Over :class:`flashbulb.AsyncFlashbulb` the async methods are native. The sync ones (``put``,
  ``search``, …) are answered only from another thread while the event loop the store runs on is
  running (a sync node under ``graph.ainvoke`` runs on such a thread), as LangGraph's own async
  stores do; on the loop itself, or with no loop, they raise and say which to call instead.

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
  is its ``relevance``. ``FlashbulbStore(client, min_relevance=0.25)`` drops hits below that
  relevance (recall's ``min_relevance``), so a query nothing matches finds nothing. Without a
  query, items come oldest first.
"""
from __future__ import annotations

import asyncio
import json
from typing import Any, Generator, Iterable, Union

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

from ._client import AsyncFlashbulb, Flashbulb
from .models import Memory

__all__ = ["FlashbulbStore"]

_OPS = frozenset({"$eq", "$ne", "$gt", "$gte", "$lt", "$lte"})
_PAGE = 500

#: One client call an operation needs: the method's name and its keyword arguments. The operations
#: are generators that yield these and get the replies back, so that one body serves both clients.
Call = tuple[str, dict[str, Any]]
Steps = Generator[Call, Any, Any]


def encode_namespace(namespace: tuple[str, ...]) -> str:
    return "/".join(part.replace("%", "%25").replace("/", "%2F") for part in namespace)


def decode_namespace(entity: str) -> tuple[str, ...]:
    return tuple(part.replace("%2F", "/").replace("%25", "%") for part in entity.split("/"))


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


def _fields(memory: Memory) -> dict[str, Any]:
    ctx = memory.context
    return dict(value=ctx.get("value", {}), key=ctx["langgraph"]["key"], namespace=decode_namespace(memory.entity_id or ""),
                created_at=memory.created_at_iso, updated_at=memory.updated_at_iso)


def _matches(namespace: tuple[str, ...], condition: MatchCondition) -> bool:
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    pairs = zip(namespace, path) if condition.match_type == "prefix" else zip(reversed(namespace), reversed(path))
    return all(p == "*" or n == p for n, p in pairs)


# -- the operations, as steps ----------------------------------------------------------------
def _run(op: Op, min_relevance: float | None) -> Steps:
    if isinstance(op, GetOp):
        memory = yield from _find(op.namespace, op.key)
        return Item(**_fields(memory)) if memory else None
    if isinstance(op, PutOp):
        return (yield from _put(op))
    if isinstance(op, SearchOp):
        return (yield from _search(op, min_relevance))
    if isinstance(op, ListNamespacesOp):
        return (yield from _list_namespaces(op))
    raise ValueError(f"unknown operation {type(op).__name__}")


def _find(namespace: tuple[str, ...], key: str) -> Steps:
    page = yield "list", dict(entity_id=encode_namespace(namespace), limit=1, filter=json.dumps({"context.langgraph.key": key}))
    return page.memories[0] if page.memories else None


def _put(op: PutOp) -> Steps:
    existing = yield from _find(op.namespace, op.key)
    if op.value is None:
        if existing:
            yield "forget", dict(memory_ids=[existing.memory_id])
        return None
    meta: dict[str, Any] = {"key": op.key, "depth": len(op.namespace)}
    meta.update({f"p{i}": part for i, part in enumerate(op.namespace)})
    fields: dict[str, Any] = {"content": _text(op.key, op.value, op.index), "context": {"langgraph": meta, "value": op.value}}
    if op.ttl is not None:
        fields["ttl_s"] = op.ttl * 60
    if existing:
        if op.ttl is None:
            fields["expires_at_us"] = None
        yield "revise", dict(id=existing.memory_id, context_mode="replace", **fields)
    else:
        yield "remember", dict(entity_id=encode_namespace(op.namespace), **fields)
    return None


def _search(op: SearchOp, min_relevance: float | None) -> Steps:
    flt = {**_namespace_filter(op.namespace_prefix), **_value_filter(op.filter), "context.langgraph.key": {"$exists": True}}
    if op.query:
        floor = {} if min_relevance is None else {"min_relevance": min_relevance}
        reply = yield "recall", dict(cue=op.query, strategies=["similarity"], top_k=op.offset + op.limit, filter=flt, **floor)
        return [SearchItem(**_fields(h.memory), score=h.relevance) for h in reply.results[op.offset:]]
    items: list[SearchItem] = []
    cursor: str | None = None
    wanted = op.offset + op.limit
    while len(items) < wanted:
        args: dict[str, Any] = {"filter": json.dumps(flt), "limit": min(_PAGE, wanted - len(items))}
        if cursor:
            args["cursor"] = cursor
        page = yield "list", args
        items += [SearchItem(**_fields(m), score=None) for m in page.memories]
        cursor = page.next_cursor
        if not cursor:
            break
    return items[op.offset:wanted]


def _list_namespaces(op: ListNamespacesOp) -> Steps:
    namespaces = [decode_namespace(e) for e in (yield "entities", {})]
    namespaces = [ns for ns in namespaces if all(_matches(ns, c) for c in op.match_conditions or ())]
    if op.max_depth is not None:
        namespaces = [ns[: op.max_depth] for ns in namespaces]
    return sorted(set(namespaces))[op.offset: op.offset + op.limit]


def _call(client: Flashbulb | AsyncFlashbulb, call: Call) -> Any:
    name, kwargs = call
    method = getattr(client, name)
    return method(kwargs.pop("id"), **kwargs) if "id" in kwargs else method(**kwargs)


def _drive(client: Flashbulb, steps: Steps) -> Any:
    try:
        call = next(steps)
        while True:
            call = steps.send(_call(client, call))
    except StopIteration as done:
        return done.value


async def _adrive(client: AsyncFlashbulb, steps: Steps) -> Any:
    try:
        call = next(steps)
        while True:
            call = steps.send(await _call(client, call))
    except StopIteration as done:
        return done.value


class FlashbulbStore(BaseStore):
    """A LangGraph ``BaseStore`` over a :class:`flashbulb.Flashbulb` or :class:`flashbulb.AsyncFlashbulb`
    client (see the module's notes)."""

    supports_ttl = True

    def __init__(self, client: Union[Flashbulb, AsyncFlashbulb], *, min_relevance: float | None = None) -> None:
        """``min_relevance`` (0..1): searches with a query leave out items whose relevance is below it."""
        if not isinstance(client, (Flashbulb, AsyncFlashbulb)):
            raise TypeError(f"FlashbulbStore needs a flashbulb.Flashbulb or flashbulb.AsyncFlashbulb client, not {type(client).__name__}")
        self.client = client
        self.min_relevance = min_relevance
        #: The event loop an async client runs on: the one running now, else the latest abatch's.
        self._loop: asyncio.AbstractEventLoop | None = None
        if isinstance(client, AsyncFlashbulb):
            try:
                self._loop = asyncio.get_running_loop()
            except RuntimeError:
                pass

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        if isinstance(self.client, Flashbulb):
            return [_drive(self.client, _run(op, self.min_relevance)) for op in ops]
        return self._batch_through_loop(list(ops))

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        if isinstance(self.client, AsyncFlashbulb):
            self._loop = asyncio.get_running_loop()
            return [await _adrive(self.client, _run(op, self.min_relevance)) for op in ops]
        return await asyncio.to_thread(self.batch, list(ops))  # the sync client is thread-safe

    def _batch_through_loop(self, ops: list[Op]) -> list[Result]:
        """A sync call on a store over the async client: run on the store's loop from another thread."""
        try:
            running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is not None and running is self._loop:
            raise asyncio.InvalidStateError(
                "a synchronous call to FlashbulbStore(AsyncFlashbulb(...)) on its own event loop would block it: "
                "await the async method instead (store.aput / aget / asearch / adelete / alist_namespaces)")
        if self._loop is None or not self._loop.is_running():
            raise RuntimeError(
                "FlashbulbStore(AsyncFlashbulb(...)) answers synchronous calls (put, get, search, …) only from another "
                "thread while its event loop runs (a sync node under graph.ainvoke); call the async methods "
                "(await store.aput(...), graph.ainvoke(...)), or give the store a flashbulb.Flashbulb for synchronous use")
        return asyncio.run_coroutine_threadsafe(self.abatch(ops), self._loop).result()
