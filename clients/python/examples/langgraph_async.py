import asyncio
from langgraph.graph import START, StateGraph
from langgraph.store.base import BaseStore
from typing_extensions import TypedDict
from flashbulb import AsyncFlashbulb
from flashbulb.langgraph import FlashbulbStore

class State(TypedDict, total=False):
    found: list[str]

async def remember_and_search(state: State, *, store: BaseStore) -> State:
    await store.aput(("users", "bob"), "hobby", {"text": "Bob plays chess on Fridays"}, index=["text"])
    return {"found": [h.value["text"] for h in await store.asearch(("users", "bob"), query="what does Bob play?")]}

async def main() -> None:
    async with AsyncFlashbulb() as fb:
        store = FlashbulbStore(await fb.ensure_workspace("agent-memory"))
        graph = StateGraph(State).add_node(remember_and_search).add_edge(START, "remember_and_search").compile(store=store)
        print((await graph.ainvoke({}))["found"])

asyncio.run(main())
