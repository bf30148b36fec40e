"""The clients: the generated operations plus the ones that stream (subscribe, export, import)
or send files (upload)."""
from __future__ import annotations

import json
from typing import Any, AsyncIterable, AsyncIterator, Iterable, Iterator, Mapping, Sequence, Union

import httpx

from . import models
from ._generated import OPERATIONS, GeneratedAsync, GeneratedSync
from ._sse import SseEvent, parse_sse, parse_sse_async
from ._transport import NOT_GIVEN, FlashbulbError, NotGiven, RequestOptions, _fields, _json, parse_reply

__all__ = ["Flashbulb", "AsyncFlashbulb", "Subscription", "AsyncSubscription"]

#: Files for upload: a mapping of name -> content, or (name, content) pairs; content is text or bytes.
Files = Union[Mapping[str, Union[str, bytes]], Sequence[tuple[str, Union[str, bytes]]]]
#: Import lines: dicts (one memory each, as export writes them) or ready JSON strings.
ImportLines = Iterable[Union[Mapping[str, Any], str]]


def _multipart(files: Files) -> list[tuple[str, tuple[str, bytes, str]]]:
    pairs = files.items() if isinstance(files, Mapping) else files
    return [("files", (name, body.encode("utf-8") if isinstance(body, str) else body, "text/plain")) for name, body in pairs]


def _ndjson_line(line: Mapping[str, Any] | str) -> bytes:
    if isinstance(line, str):
        return (line.rstrip("\n") + "\n").encode("utf-8")
    return _json(line) + b"\n"


def _export_line(line: str) -> dict[str, Any]:
    """One export line; the error line an export that failed midway ends with is raised."""
    value = json.loads(line)
    if "memory" not in value and isinstance(value.get("error_code"), str):
        raise FlashbulbError(500, value["error_code"], str(value.get("message", "")))
    return value


def _export_query(embeddings: bool | NotGiven) -> dict[str, str] | None:
    return None if embeddings is NOT_GIVEN else {"embeddings": "true" if embeddings else "false"}


def _subscribed_id(event: SseEvent | None) -> int:
    if event is None or event.event != "subscribed":
        raise FlashbulbError(500, "internal_error", "the stream did not start with a subscribed event")
    return int(json.loads(event.data)["subscription_id"])


class Flashbulb(GeneratedSync):
    """Synchronous client: ``Flashbulb()`` reads ``FLASHBULB_URL`` (else ``http://localhost:6381``),
    ``FLASHBULB_API_KEY`` and ``FLASHBULB_WORKSPACE``; ``Flashbulb(base_url=…, api_key=…)`` says them.

    Every REST route is a method named after its operation, taking the JSON fields as keyword
    arguments; replies are pydantic models generated from the OpenAPI document
    (:mod:`flashbulb.models`: ``fb.recall(cue=…).results[0].memory.content``), keeping any field a
    newer server adds. Errors raise :class:`FlashbulbError` with ``error_code``.
    """

    _OPERATIONS = OPERATIONS

    def ensure_workspace(self, slug: str, *, options: RequestOptions | None = None) -> Flashbulb:
        """This client acting in workspace ``slug``, which is created first if it does not exist (admin keys)."""
        try:
            self.workspaces_create(slug=slug, options=options)
        except FlashbulbError as err:
            if err.error_code != "conflict":
                raise
        return self.with_workspace(slug)

    def subscribe(self, *, options: RequestOptions | None = None, **fields: Any) -> Subscription:
        """Opens a subscription (``POST /v1/subscribe``): iterate it for pushes, ``feed(text)`` and ``close()``."""
        response = self._stream(OPERATIONS["subscribe"], content=_json(fields),
                                headers={"content-type": "application/json"}, accept="text/event-stream", options=options)
        events = parse_sse(response.iter_lines())
        try:
            sub_id = _subscribed_id(next(events, None))
        except BaseException:
            response.close()
            raise
        return Subscription(self, sub_id, events, response)

    def upload(self, files: Files, *, options: RequestOptions | None = None) -> models.UploadResponse:
        """Uploads documents (.md / .txt); each name is the file's relative path (``POST /v1/upload``)."""
        return parse_reply(models.UploadResponse, self._send(OPERATIONS["upload"], files=_multipart(files), options=options).content)

    def export(self, *, embeddings: bool | NotGiven = NOT_GIVEN, options: RequestOptions | None = None) -> Iterator[dict[str, Any]]:
        """Streams the workspace, one dict per memory (``{memory, versions, edges}``) (``GET /v1/export``)."""
        response = self._stream(OPERATIONS["export"], query=_export_query(embeddings),
                                accept="application/x-ndjson", options=options)
        try:
            for line in response.iter_lines():
                if line.strip():
                    yield _export_line(line)
        finally:
            response.close()

    def import_(self, lines: ImportLines, *, first_line: int | NotGiven = NOT_GIVEN, options: RequestOptions | None = None) -> models.ImportResponse:
        """Imports NDJSON lines (dicts as ``export`` yields them, or JSON strings), streamed (``POST /v1/import``)."""
        body = (_ndjson_line(line) for line in lines)
        response = self._send(OPERATIONS["import"], content=body, query=_fields(first_line=first_line) or None,
                              headers={"content-type": "application/x-ndjson"}, options=options, replayable=False)
        return parse_reply(models.ImportResponse, response.content)


class AsyncFlashbulb(GeneratedAsync):
    """Asynchronous client (``httpx.AsyncClient``); the same methods as :class:`Flashbulb`, awaited."""

    _OPERATIONS = OPERATIONS

    async def ensure_workspace(self, slug: str, *, options: RequestOptions | None = None) -> AsyncFlashbulb:
        """This client acting in workspace ``slug``, which is created first if it does not exist (admin keys)."""
        try:
            await self.workspaces_create(slug=slug, options=options)
        except FlashbulbError as err:
            if err.error_code != "conflict":
                raise
        return self.with_workspace(slug)

    async def subscribe(self, *, options: RequestOptions | None = None, **fields: Any) -> AsyncSubscription:
        """Opens a subscription: ``async for`` over it for pushes, ``await feed(text)``, ``await close()``."""
        response = await self._stream(OPERATIONS["subscribe"], content=_json(fields),
                                      headers={"content-type": "application/json"}, accept="text/event-stream", options=options)
        events = parse_sse_async(response.aiter_lines())
        try:
            sub_id = _subscribed_id(await anext(events, None))
        except BaseException:
            await response.aclose()
            raise
        return AsyncSubscription(self, sub_id, events, response)

    async def upload(self, files: Files, *, options: RequestOptions | None = None) -> models.UploadResponse:
        """Uploads documents (.md / .txt); each name is the file's relative path."""
        return parse_reply(models.UploadResponse, (await self._send(OPERATIONS["upload"], files=_multipart(files), options=options)).content)

    async def export(self, *, embeddings: bool | NotGiven = NOT_GIVEN, options: RequestOptions | None = None) -> AsyncIterator[dict[str, Any]]:
        """Streams the workspace as dicts, one per memory line."""
        response = await self._stream(OPERATIONS["export"], query=_export_query(embeddings),
                                      accept="application/x-ndjson", options=options)
        try:
            async for line in response.aiter_lines():
                if line.strip():
                    yield _export_line(line)
        finally:
            await response.aclose()

    async def import_(self, lines: ImportLines | AsyncIterable[Mapping[str, Any] | str], *, first_line: int | NotGiven = NOT_GIVEN,
                      options: RequestOptions | None = None) -> models.ImportResponse:
        """Imports NDJSON lines, streamed."""
        async def body() -> AsyncIterator[bytes]:
            if isinstance(lines, AsyncIterable):
                async for line in lines:
                    yield _ndjson_line(line)
            else:
                for line in lines:
                    yield _ndjson_line(line)
        response = await self._send(OPERATIONS["import"], content=body(), query=_fields(first_line=first_line) or None,
                                    headers={"content-type": "application/x-ndjson"}, options=options, replayable=False)
        return parse_reply(models.ImportResponse, response.content)


class Subscription:
    """An open subscription: iterate for pushes (:class:`flashbulb.models.Push`: memory, confidence, …); ``feed`` and ``close``.

    Iteration ends when the server closes the stream; ``closed_reason`` then says why
    (``closed``, or ``shutdown`` when the server stopped).
    """

    def __init__(self, client: Flashbulb, sub_id: int, events: Iterator[SseEvent], response: httpx.Response) -> None:
        self.id = sub_id
        self.closed_reason: str | None = None
        self._client = client
        self._events = events
        self._response = response

    def feed(self, text: str) -> models.FeedResponse:
        """Sends conversation text; matching memories arrive as pushes."""
        return self._client.feed(str(self.id), text=text)

    def close(self) -> None:
        """Closes the subscription on the server; iteration ends after the pushes already sent."""
        try:
            self._client.close_subscription(str(self.id))
        except FlashbulbError as err:
            if err.error_code != "not_found":
                raise

    def __iter__(self) -> Iterator[models.Push]:
        return self

    def __next__(self) -> models.Push:
        for event in self._events:
            if event.event == "closed":
                self.closed_reason = json.loads(event.data).get("reason")
                break
            if event.event == "message":
                return parse_reply(models.Push, event.data)
        self._response.close()
        raise StopIteration

    def __enter__(self) -> Subscription:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
        self._response.close()


class AsyncSubscription:
    """An open subscription for the async client: ``async for`` pushes; ``await feed(text)``, ``await close()``."""

    def __init__(self, client: AsyncFlashbulb, sub_id: int, events: AsyncIterator[SseEvent], response: httpx.Response) -> None:
        self.id = sub_id
        self.closed_reason: str | None = None
        self._client = client
        self._events = events
        self._response = response

    async def feed(self, text: str) -> models.FeedResponse:
        return await self._client.feed(str(self.id), text=text)

    async def close(self) -> None:
        try:
            await self._client.close_subscription(str(self.id))
        except FlashbulbError as err:
            if err.error_code != "not_found":
                raise

    def __aiter__(self) -> AsyncIterator[models.Push]:
        return self

    async def __anext__(self) -> models.Push:
        async for event in self._events:
            if event.event == "closed":
                self.closed_reason = json.loads(event.data).get("reason")
                break
            if event.event == "message":
                return parse_reply(models.Push, event.data)
        await self._response.aclose()
        raise StopAsyncIteration

    async def __aenter__(self) -> AsyncSubscription:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
        await self._response.aclose()
