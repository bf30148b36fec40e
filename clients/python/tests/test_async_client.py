"""The asynchronous client against a live server."""
from __future__ import annotations

import asyncio

import pytest

from flashbulb import AsyncFlashbulb, FlashbulbError


async def test_remember_recall_and_errors(afb: AsyncFlashbulb) -> None:
    made = await asyncio.gather(*(afb.remember(content=f"Bob plays {game} on Fridays", entity_id="bob") for game in ("chess", "tennis", "poker")))
    assert len({m.memory_id for m in made}) == 3
    hits = (await afb.recall(cue="tennis", strategies=["similarity"], top_k=2)).results
    assert "tennis" in hits[0].memory.content
    assert await afb.entities() == ["bob"]
    with pytest.raises(FlashbulbError) as err:
        await afb.get("00000000000000000000000000000000")
    assert err.value.error_code == "not_found"


async def test_subscribe_as_an_async_iterator(afb: AsyncFlashbulb) -> None:
    await afb.remember(content="Carol is learning to play the cello", entity_id="carol")
    sub = await afb.subscribe(confidence_threshold=0.1, entity_id="carol")
    async with sub:
        await sub.feed("Carol practised the cello all evening. ")
        push = await asyncio.wait_for(anext(sub), 30)
        assert "cello" in push.memory.content
        await sub.close()
        assert [p async for p in sub] == [] and sub.closed_reason == "closed"


async def test_export_and_import_stream(afb: AsyncFlashbulb) -> None:
    await afb.remember(content="exported through the async client")
    lines = [line async for line in afb.export()]
    assert [line["memory"]["content"] for line in lines] == ["exported through the async client"]

    async def again():
        for line in lines:
            yield line

    assert (await afb.import_(again())).skipped == 1
