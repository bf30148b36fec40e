"""HTTP transport shared by the generated methods: URLs with the workspace prefix, JSON bodies,
errors as :class:`FlashbulbError`, and retries with back-off on 429 and 503 only."""
from __future__ import annotations

import asyncio
import functools
import json
import random
import time
from dataclasses import dataclass, field
from typing import Any, Literal, Mapping, TypedDict
from urllib.parse import quote

import httpx
from pydantic import BaseModel, TypeAdapter
from typing_extensions import Self

from ._config import Origin, resolve, unauthenticated_hint, unreachable_hint

__all__ = [
    "NOT_GIVEN", "NotGiven", "Operation", "RequestOptions", "RetryPolicy", "FlashbulbError",
    "FlashbulbConnectionError", "SyncTransport", "AsyncTransport",
]

RETRIED = frozenset({429, 503})


class NotGiven:
    """The default of every optional argument: the field is not sent (``None`` sends ``null``)."""

    _instance: NotGiven | None = None

    def __new__(cls) -> NotGiven:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "NOT_GIVEN"


NOT_GIVEN = NotGiven()


@dataclass(frozen=True)
class Operation:
    """One REST operation: its method, path template, whether /v1/workspaces/<slug>/ applies, reply kind."""

    method: str
    path: str
    scoped: bool
    response: Literal["json", "text", "none"]


class RequestOptions(TypedDict, total=False):
    """Per-call options: extra headers and a timeout in seconds."""

    headers: Mapping[str, str]
    timeout: float


@dataclass(frozen=True)
class RetryPolicy:
    """Retries after the first attempt for 429 and 503 answers; waits honour ``Retry-After``."""

    retries: int = 3
    base_delay_s: float = 0.2
    max_delay_s: float = 10.0

    def delay(self, attempt: int, retry_after_s: float | None) -> float:
        if retry_after_s is not None:
            return min(self.max_delay_s, retry_after_s)
        return min(self.max_delay_s, self.base_delay_s * 2**attempt * (0.5 + random.random() / 2))


class FlashbulbError(Exception):
    """An error answer from the server: the HTTP status, the server's ``error_code`` and message."""

    def __init__(self, status: int, error_code: str, message: str, retry_after_s: float | None = None) -> None:
        super().__init__(f"{error_code} ({status}): {message}")
        self.status = status
        self.error_code = error_code
        self.message = message
        self.retry_after_s = retry_after_s

    @classmethod
    def from_response(cls, status: int, headers: Mapping[str, str], text: str) -> FlashbulbError:
        header = headers.get("retry-after")
        retry_after = float(header) if header and header.replace(".", "", 1).isdigit() else None
        try:
            body = json.loads(text)
            if isinstance(body, dict) and isinstance(body.get("error_code"), str):
                return cls(status, body["error_code"], str(body.get("message", text)), retry_after)
        except ValueError:
            pass
        code = "internal_error" if status >= 500 else "invalid_input"
        return cls(status, code, f"HTTP {status}: {text[:200]}", retry_after)


class FlashbulbConnectionError(FlashbulbError):
    """The server could not be reached (refused, unknown host, connect timeout): ``status`` 0,
    ``error_code`` ``connection_error``; the message names the URL and where it came from."""

    def __init__(self, message: str) -> None:
        super().__init__(0, "connection_error", message)


def _fields(**values: Any) -> dict[str, Any]:
    """The arguments that were given (NOT_GIVEN dropped, None kept as null)."""
    return {k.rstrip("_"): v for k, v in values.items() if v is not NOT_GIVEN}


def _query_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


@dataclass
class _Settings:
    base_url: str
    api_key: str | None
    workspace: str | None
    timeout: float
    retry: RetryPolicy
    headers: dict[str, str] = field(default_factory=dict)
    origin: Origin = Origin("argument", "argument")

    def explain(self, error: FlashbulbError) -> FlashbulbError:
        """A 401 says how to give a key (or where the refused one came from)."""
        if error.status != 401:
            return error
        return FlashbulbError(error.status, error.error_code, f"{error.message}; {unauthenticated_hint(self.origin)}", error.retry_after_s)

    def unreachable(self, err: httpx.TransportError) -> FlashbulbConnectionError:
        return FlashbulbConnectionError(f"{unreachable_hint(self.base_url, self.origin)}: {err}")

    def url(self, op: Operation, params: Mapping[str, str] | None) -> str:
        path = op.path
        for name, value in (params or {}).items():
            path = path.replace("{" + name + "}", quote(str(value), safe=""))
        if self.workspace is not None and op.scoped:
            path = path.replace("/v1/", f"/v1/workspaces/{quote(self.workspace, safe='')}/", 1)
        return self.base_url.rstrip("/") + path

    def request_headers(self, accept: str, options: RequestOptions | None, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        headers = {"accept": accept, **self.headers, **(extra or {}), **dict((options or {}).get("headers", {}))}
        if self.api_key:
            headers["authorization"] = f"Bearer {self.api_key}"
        return headers


def _plain(value: Any) -> Any:
    """A model given where JSON is sent (a reply's ``Memory`` as an edge, …) goes as its JSON."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_unset=True)
    raise TypeError(f"{type(value).__name__} is not JSON")


def _json(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=_plain).encode("utf-8")


def _encode(op: Operation, query: Mapping[str, Any] | None, body: Any) -> tuple[dict[str, str], bytes | None, dict[str, str]]:
    q = {k: _query_value(v) for k, v in (query or {}).items() if v is not None}
    if body is None:
        return q, None, {}
    return q, _json(body), {"content-type": "application/json"}


@functools.lru_cache(maxsize=None)
def _adapter(reply: Any) -> TypeAdapter[Any]:
    return TypeAdapter(reply)


def parse_reply(reply: Any, body: bytes | str) -> Any:
    """A JSON reply as its model (``models.RecallResponse``, ``list[models.Memory]``, …)."""
    return _adapter(reply).validate_json(body)


def _decode(op: Operation, response: httpx.Response, reply: Any = None) -> Any:
    if op.response == "none" or response.status_code == 204 or not response.content:
        return None
    if op.response == "text":
        return response.text
    return response.json() if reply is None else parse_reply(reply, response.content)


class _Base:
    """What both transports share: settings, workspace scoping, building a request."""

    _OPERATIONS: Mapping[str, Operation] = {}
    #: The httpx client class a transport makes when it is not given one.
    _HTTP: type[httpx.Client] | type[httpx.AsyncClient]

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        workspace: str | None = None,
        timeout: float = 30.0,
        retry: RetryPolicy | None = None,
        headers: Mapping[str, str] | None = None,
        http_client: Any = None,
    ) -> None:
        """``base_url``, ``api_key`` and ``workspace`` default to ``FLASHBULB_URL``, ``FLASHBULB_API_KEY``
        and ``FLASHBULB_WORKSPACE``; with neither, the URL is ``http://localhost:6381``."""
        url, key, ws, origin = resolve(base_url, api_key, workspace)
        self._settings = _Settings(url, key, ws, timeout, retry or RetryPolicy(), dict(headers or {}), origin)
        self._owns_http = http_client is None
        self._http = http_client or self._HTTP(timeout=timeout)

    def with_workspace(self, workspace: str) -> Self:
        """The same client acting in another workspace (admin keys); it shares the connection pool."""
        other = object.__new__(type(self))
        other.__dict__.update(self.__dict__)
        other._settings = _Settings(**{**self._settings.__dict__, "workspace": workspace})
        other._owns_http = False
        return other

    def _build(self, http: httpx.Client | httpx.AsyncClient, op: Operation, *, params: Mapping[str, str] | None = None,
               query: Mapping[str, str] | None = None, content: Any = None, files: Any = None,
               headers: Mapping[str, str] | None = None, options: RequestOptions | None = None,
               accept: str = "application/json", stream: bool = False) -> httpx.Request:
        s = self._settings
        timeout = httpx.Timeout(s.timeout, read=None) if stream else (options or {}).get("timeout", s.timeout)
        return http.build_request(op.method, s.url(op, params), params=query, content=content, files=files,
                                  headers=s.request_headers(accept, options, headers), timeout=timeout)


class SyncTransport(_Base):
    """Sends requests with an :class:`httpx.Client`; subclasses add one method per operation."""

    _HTTP = httpx.Client
    _http: httpx.Client

    def close(self) -> None:
        if self._owns_http:
            self._http.close()

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _call(self, op_id: str, *, params: Mapping[str, str] | None = None, query: Mapping[str, Any] | None = None,
              body: Any = None, reply: Any = None, options: RequestOptions | None = None) -> Any:
        op = self._OPERATIONS[op_id]
        q, data, extra = _encode(op, query, body)
        return _decode(op, self._send(op, params=params, query=q, content=data, headers=extra, options=options), reply)

    def _send(self, op: Operation, *, replayable: bool = True, **request: Any) -> httpx.Response:
        """Sends one request, retrying 429 and 503 (only when the body can be sent again)."""
        built = self._build(self._http, op, **request)
        retry = self._settings.retry
        retries = retry.retries if replayable else 0
        for attempt in range(retries + 1):
            try:
                response = self._http.send(built)
            except (httpx.ConnectError, httpx.ConnectTimeout) as err:
                raise self._settings.unreachable(err) from err
            if response.is_success:
                return response
            error = self._settings.explain(FlashbulbError.from_response(response.status_code, response.headers, response.text))
            if response.status_code not in RETRIED or attempt >= retries:
                raise error
            time.sleep(retry.delay(attempt, error.retry_after_s))
        raise AssertionError("unreachable")

    def _stream(self, op: Operation, **request: Any) -> httpx.Response:
        """Opens a streamed response (the caller closes it); an error status is raised at once."""
        try:
            response = self._http.send(self._build(self._http, op, stream=True, **request), stream=True)
        except (httpx.ConnectError, httpx.ConnectTimeout) as err:
            raise self._settings.unreachable(err) from err
        if not response.is_success:
            response.read()
            response.close()
            raise self._settings.explain(FlashbulbError.from_response(response.status_code, response.headers, response.text))
        return response


class AsyncTransport(_Base):
    """Sends requests with an :class:`httpx.AsyncClient`; subclasses add one method per operation."""

    _HTTP = httpx.AsyncClient
    _http: httpx.AsyncClient

    async def aclose(self) -> None:
        if self._owns_http:
            await self._http.aclose()

    async def __aenter__(self) -> Any:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def _call(self, op_id: str, *, params: Mapping[str, str] | None = None, query: Mapping[str, Any] | None = None,
                    body: Any = None, reply: Any = None, options: RequestOptions | None = None) -> Any:
        op = self._OPERATIONS[op_id]
        q, data, extra = _encode(op, query, body)
        return _decode(op, await self._send(op, params=params, query=q, content=data, headers=extra, options=options), reply)

    async def _send(self, op: Operation, *, replayable: bool = True, **request: Any) -> httpx.Response:
        """Sends one request, retrying 429 and 503 (only when the body can be sent again)."""
        built = self._build(self._http, op, **request)
        retry = self._settings.retry
        retries = retry.retries if replayable else 0
        for attempt in range(retries + 1):
            try:
                response = await self._http.send(built)
            except (httpx.ConnectError, httpx.ConnectTimeout) as err:
                raise self._settings.unreachable(err) from err
            if response.is_success:
                return response
            error = self._settings.explain(FlashbulbError.from_response(response.status_code, response.headers, response.text))
            if response.status_code not in RETRIED or attempt >= retries:
                raise error
            await asyncio.sleep(retry.delay(attempt, error.retry_after_s))
        raise AssertionError("unreachable")

    async def _stream(self, op: Operation, **request: Any) -> httpx.Response:
        """Opens a streamed response (the caller closes it); an error status is raised at once."""
        try:
            response = await self._http.send(self._build(self._http, op, stream=True, **request), stream=True)
        except (httpx.ConnectError, httpx.ConnectTimeout) as err:
            raise self._settings.unreachable(err) from err
        if not response.is_success:
            await response.aread()
            await response.aclose()
            raise self._settings.explain(FlashbulbError.from_response(response.status_code, response.headers, response.text))
        return response
