from langgraph.graph import START, StateGraph
from langgraph.store.base import BaseStore
from typing_extensions import TypedDict
from flashbulb import Flashbulb
from flashbulb.langgraph import FlashbulbStore

class State(TypedDict, total=False):
    fact: str
    found: list[str]

def write(state: State, *, store: BaseStore) -> State:
    store.put(("users", "alice"), "drink", {"text": state["fact"]}, index=["text"])
    return {}

def search(state: State, *, store: BaseStore) -> State:
    return {"found": [h.value["text"] for h in store.search(("users", "alice"), query="what does Alice drink?")]}

store = FlashbulbStore(Flashbulb().ensure_workspace("agent-memory"))  # a workspace of its own (admin key)
graph = StateGraph(State).add_node(write).add_node(search).add_edge(START, "write").add_edge("write", "search").compile(store=store)
print(graph.invoke({"fact": "Alice drinks green tea"})["found"])
