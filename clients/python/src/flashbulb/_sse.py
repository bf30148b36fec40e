"""Server-Sent Events parsing over lines (comments skipped; ``message`` is the default event)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import AsyncIterator, Iterable, Iterator


@dataclass
class SseEvent:
    event: str
    data: str
    id: str | None = None


class _Builder:
    """Collects one event's fields; ``line`` returns the finished event at a blank line."""

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self.event, self.data, self.id, self.has_data = "message", "", None, False

    def line(self, line: str) -> SseEvent | None:
        if line == "":
            done = SseEvent(self.event, self.data, self.id) if self.has_data else None
            self._reset()
            return done
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "event":
            self.event = value
        elif name == "id":
            self.id = value
        elif name == "data":
            self.data = f"{self.data}\n{value}" if self.has_data else value
            self.has_data = True
        return None


def parse_sse(lines: Iterable[str]) -> Iterator[SseEvent]:
    builder = _Builder()
    for line in lines:
        event = builder.line(line.rstrip("\r"))
        if event is not None:
            yield event


async def parse_sse_async(lines: AsyncIterator[str]) -> AsyncIterator[SseEvent]:
    builder = _Builder()
    async for line in lines:
        event = builder.line(line.rstrip("\r"))
        if event is not None:
            yield event
