"""FlashbulbStore against LangGraph's own InMemoryStore (the reference behaviour of BaseStore),
operation by operation, and inside small real LangGraph graphs, over the sync and the async client."""
from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from typing_extensions import TypedDict

from flashbulb import AsyncFlashbulb, Flashbulb
from flashbulb.langgraph import FlashbulbStore, decode_namespace, encode_namespace


@pytest.fixture()
def stores(fb: Flashbulb) -> tuple[BaseStore, BaseStore]:
    return InMemoryStore(), FlashbulbStore(fb)


def both(stores: tuple[BaseStore, BaseStore], method: str, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
    return tuple(getattr(s, method)(*args, **kwargs) for s in stores)  # type: ignore[return-value]


def plain(items: Any) -> Any:
    if items is None:
        return None
    if isinstance(items, list):
        return [plain(i) for i in items]
    return (items.namespace, items.key, items.value)


def test_namespace_encoding_round_trips() -> None:
    for ns in [("a",), ("users", "alice", "facts"), ("with/slash", "100%", "")]:
        assert decode_namespace(encode_namespace(ns)) == ns


def test_put_get_update_delete_like_the_in_memory_store(stores: tuple[BaseStore, BaseStore]) -> None:
    ns = ("users", "alice")
    both(stores, "put", ns, "prefs", {"drink": "tea", "n": 1})
    ref, fb = both(stores, "get", ns, "prefs")
    assert plain(fb) == plain(ref)
    both(stores, "put", ns, "prefs", {"drink": "coffee", "n": 2})
    ref, fb = both(stores, "get", ns, "prefs")
    assert plain(fb) == plain(ref) == (ns, "prefs", {"drink": "coffee", "n": 2})
    assert fb.created_at <= fb.updated_at
    both(stores, "delete", ns, "prefs")
    assert both(stores, "get", ns, "prefs") == (None, None)
    assert both(stores, "get", ("users", "nobody"), "prefs") == (None, None)


def test_a_put_on_an_existing_key_keeps_the_memory_and_its_versions(fb: Flashbulb) -> None:
    store = FlashbulbStore(fb)
    store.put(("notes",), "k", {"text": "first"})
    store.put(("notes",), "k", {"text": "second"})
    (live,) = fb.list().memories
    assert live.kind == "revision" and live.context["value"] == {"text": "second"}
    versions = fb.list(include_superseded=True).memories
    assert versions[0].memory_id == live.memory_id and len(versions) == 2
    assert [m.context["value"]["text"] for m in versions] == ["second", "first"]


def test_search_filters_and_pages_like_the_in_memory_store(stores: tuple[BaseStore, BaseStore]) -> None:
    for i in range(7):
        both(stores, "put", ("docs", "a"), f"d{i}", {"kind": "even" if i % 2 == 0 else "odd", "n": i})
    both(stores, "put", ("docs", "b"), "x", {"kind": "even", "n": 100})
    for kwargs in [dict(limit=3), dict(limit=3, offset=3), dict(filter={"kind": "odd"}),
                   dict(filter={"n": {"$gte": 4}}), dict(filter={"kind": "even", "n": {"$lt": 5}})]:
        ref, fb = both(stores, "search", ("docs", "a"), **kwargs)
        assert plain(fb) == plain(ref), kwargs
    ref, fb = both(stores, "search", ("docs",), filter={"kind": "even"}, limit=20)
    assert sorted(plain(fb)) == sorted(plain(ref))


def test_list_namespaces_like_the_in_memory_store(stores: tuple[BaseStore, BaseStore]) -> None:
    for ns in [("a", "b", "c"), ("a", "b", "d"), ("a", "x"), ("z", "b")]:
        both(stores, "put", ns, "k", {"v": 1})
    for kwargs in [{}, dict(prefix=("a",)), dict(suffix=("b",)), dict(prefix=("a", "*", "c")),
                   dict(max_depth=2), dict(limit=2, offset=1)]:
        ref, fb = both(stores, "list_namespaces", **kwargs)
        assert fb == ref, kwargs


def test_semantic_search_uses_hybrid_recall(fb: Flashbulb) -> None:
    store = FlashbulbStore(fb)
    store.put(("u", "alice"), "tea", {"text": "Alice drinks green tea every morning"}, index=["text"])
    store.put(("u", "alice"), "bike", {"text": "Alice rides her bike to work"}, index=["text"])
    store.put(("u", "bob"), "tea", {"text": "Bob hates green tea"}, index=["text"])
    hits = store.search(("u", "alice"), query="green tea", limit=2)
    assert hits[0].key == "tea" and hits[0].namespace == ("u", "alice")
    assert all(h.namespace == ("u", "alice") for h in hits) and 0 < hits[0].score <= 1


def test_min_relevance_passes_to_recall(fb: Flashbulb) -> None:
    """A query nothing matches finds nothing under the floor; a good one still finds its item."""
    open_store = FlashbulbStore(fb)
    open_store.put(("u",), "tea", {"text": "Alice drinks green tea every morning"}, index=["text"])
    good = open_store.search(("u",), query="Alice drinks green tea every morning")[0].score
    noise = open_store.search(("u",), query="zzzz qqqq")
    assert len(noise) == 1 and noise[0].score < good, "without a floor, hybrid recall returns the item for any query"
    floored = FlashbulbStore(fb, min_relevance=(noise[0].score + good) / 2)
    assert floored.search(("u",), query="zzzz qqqq") == []
    assert [h.key for h in floored.search(("u",), query="Alice drinks green tea every morning")] == ["tea"]


async def test_min_relevance_passes_to_recall_over_the_async_client(afb: AsyncFlashbulb) -> None:
    store = FlashbulbStore(afb, min_relevance=0.99)
    await store.aput(("u",), "tea", {"text": "Alice drinks green tea every morning"}, index=["text"])
    assert await store.asearch(("u",), query="zzzz qqqq") == []


def test_ttl_maps_to_expiry(fb: Flashbulb) -> None:
    FlashbulbStore(fb).put(("t",), "k", {"v": 1}, ttl=10)
    memory = fb.list().memories[0]
    assert memory.expires_at - memory.created_at == 600_000_000


async def test_async_batch(fb: Flashbulb) -> None:
    store = FlashbulbStore(fb)
    await store.aput(("a",), "k", {"v": 1})
    assert (await store.aget(("a",), "k")).value == {"v": 1}
    assert [i.key for i in await store.asearch(("a",))] == ["k"]


def test_a_langgraph_graph_writes_and_searches(fb: Flashbulb) -> None:
    class State(TypedDict, total=False):
        user: str
        fact: str
        found: list[str]

    def write(state: State, *, store: BaseStore) -> State:
        store.put(("users", state["user"], "facts"), "drink", {"text": state["fact"]}, index=["text"])
        return {}

    def search(state: State, *, store: BaseStore) -> State:
        hits = store.search(("users", state["user"]), query="what does she drink", limit=3)
        return {"found": [h.value["text"] for h in hits]}

    graph = (StateGraph(State).add_node("write", write).add_node("search", search)
             .add_edge(START, "write").add_edge("write", "search").add_edge("search", END)
             .compile(store=FlashbulbStore(fb)))
    out = graph.invoke({"user": "alice", "fact": "Alice drinks green tea"})
    assert out["found"] == ["Alice drinks green tea"]


# -- over the async client ---------------------------------------------------------------------
@pytest.fixture()
def async_stores(afb: AsyncFlashbulb) -> tuple[BaseStore, BaseStore]:
    return InMemoryStore(), FlashbulbStore(afb)


async def aboth(stores: tuple[BaseStore, BaseStore], method: str, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
    return tuple([await getattr(s, method)(*args, **kwargs) for s in stores])  # type: ignore[return-value]


async def test_over_the_async_client_every_async_method_works_like_the_in_memory_store(async_stores: tuple[BaseStore, BaseStore]) -> None:
    ns = ("users", "alice")
    await aboth(async_stores, "aput", ns, "prefs", {"drink": "tea", "n": 1})
    await aboth(async_stores, "aput", ns, "prefs", {"drink": "coffee", "n": 2})
    await aboth(async_stores, "aput", ("users", "bob"), "prefs", {"drink": "water", "n": 3})
    ref, fb = await aboth(async_stores, "aget", ns, "prefs")
    assert plain(fb) == plain(ref) == (ns, "prefs", {"drink": "coffee", "n": 2})
    ref, fb = await aboth(async_stores, "asearch", ("users",), filter={"n": {"$gte": 2}})
    assert sorted(plain(fb)) == sorted(plain(ref))
    ref, fb = await aboth(async_stores, "alist_namespaces", prefix=("users",))
    assert fb == ref
    await aboth(async_stores, "adelete", ns, "prefs")
    assert await aboth(async_stores, "aget", ns, "prefs") == (None, None)


async def test_over_the_async_client_semantic_search_and_ttl(afb: AsyncFlashbulb) -> None:
    store = FlashbulbStore(afb)
    await store.aput(("u",), "tea", {"text": "Alice drinks green tea every morning"}, index=["text"], ttl=10)
    await store.aput(("u",), "bike", {"text": "Alice rides her bike to work"}, index=["text"])
    hits = await store.asearch(("u",), query="green tea", limit=1)
    assert [h.key for h in hits] == ["tea"] and 0 < hits[0].score <= 1
    memory = next(m for m in (await afb.list()).memories if m.context["langgraph"]["key"] == "tea")
    assert memory.expires_at - memory.created_at == 600_000_000


async def test_over_the_async_client_a_graph_runs_async_and_sync_nodes(afb: AsyncFlashbulb) -> None:
    """Async nodes await the store; a sync node (LangGraph runs it on a worker thread) calls it
    synchronously, and the store runs that call on its event loop."""
    class State(TypedDict, total=False):
        fact: str
        found: list[str]
        counted: int

    async def write(state: State, *, store: BaseStore) -> State:
        await store.aput(("users", "alice"), "drink", {"text": state["fact"]}, index=["text"])
        return {}

    def count(state: State, *, store: BaseStore) -> State:
        return {"counted": len(store.search(("users",)))}

    async def search(state: State, *, store: BaseStore) -> State:
        return {"found": [h.value["text"] for h in await store.asearch(("users",), query="what does Alice drink?")]}

    graph = (StateGraph(State).add_node("write", write).add_node("count", count).add_node("search", search)
             .add_edge(START, "write").add_edge("write", "count").add_edge("count", "search").add_edge("search", END)
             .compile(store=FlashbulbStore(afb)))
    out = await graph.ainvoke({"fact": "Alice drinks green tea"})
    assert out["found"] == ["Alice drinks green tea"] and out["counted"] == 1


async def test_over_the_async_client_a_sync_call_on_the_event_loop_says_what_to_call(afb: AsyncFlashbulb) -> None:
    store = FlashbulbStore(afb)
    with pytest.raises(asyncio.InvalidStateError, match="await the async method"):
        store.put(("a",), "k", {"v": 1})


def test_over_the_async_client_a_sync_call_without_a_running_loop_says_what_to_do(server, workspace: str) -> None:
    store = FlashbulbStore(AsyncFlashbulb(base_url=server.url, api_key=server.admin_key, workspace=workspace))
    with pytest.raises(RuntimeError, match=r"give the store a flashbulb\.Flashbulb"):
        store.get(("a",), "k")


def test_the_store_refuses_what_is_not_a_flashbulb_client() -> None:
    with pytest.raises(TypeError, match="Flashbulb or flashbulb.AsyncFlashbulb"):
        FlashbulbStore(object())  # type: ignore[arg-type]
