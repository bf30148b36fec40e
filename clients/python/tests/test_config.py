"""Where a client connects and with which key: arguments, else FLASHBULB_URL / FLASHBULB_API_KEY /
FLASHBULB_WORKSPACE, else http://localhost:6381; and errors that say how to set each."""
from __future__ import annotations

import uuid

import httpx
import pytest

from flashbulb import AsyncFlashbulb, Flashbulb, FlashbulbError
DEFAULT_URL = "http://localhost:6381"
FlashbulbConnectionError = FlashbulbError


@pytest.fixture(autouse=True)
def no_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("FLASHBULB_URL", "FLASHBULB_API_KEY", "FLASHBULB_WORKSPACE"):
        monkeypatch.delenv(name, raising=False)


def recording() -> tuple[list[httpx.Request], httpx.Client]:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"memories": [], "next_cursor": None} if request.url.path.endswith("/memories") else {"status": "alive"})

    return seen, httpx.Client(transport=httpx.MockTransport(handler))


def test_the_variables_give_the_url_the_key_and_the_workspace(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLASHBULB_URL", "http://fb.example:7000/")
    monkeypatch.setenv("FLASHBULB_API_KEY", "fb_live_from_env")
    monkeypatch.setenv("FLASHBULB_WORKSPACE", "team-a")
    seen, http = recording()
    Flashbulb(http_client=http).list()
    assert str(seen[0].url) == "http://fb.example:7000/v1/workspaces/team-a/memories"
    assert seen[0].headers["authorization"] == "Bearer fb_live_from_env"


def test_arguments_win_over_the_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLASHBULB_URL", "http://env.example")
    monkeypatch.setenv("FLASHBULB_API_KEY", "fb_live_env")
    seen, http = recording()
    Flashbulb(base_url="http://arg.example", api_key="fb_live_arg", http_client=http).health_live()
    assert seen[0].url.host == "arg.example" and seen[0].headers["authorization"] == "Bearer fb_live_arg"


def test_without_url_or_variable_the_client_talks_to_the_local_default() -> None:
    seen, http = recording()
    Flashbulb(http_client=http).health_live()
    assert str(seen[0].url) == f"{DEFAULT_URL}/v1/health/live" == "http://localhost:6381/v1/health/live"
    assert "authorization" not in seen[0].headers


def test_an_unreachable_default_says_how_to_point_the_client_elsewhere() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("[Errno 111] Connection refused", request=request)

    client = Flashbulb(http_client=httpx.Client(transport=httpx.MockTransport(refuse)))
    with pytest.raises(FlashbulbConnectionError) as err:
        client.health_live()
    assert err.value.status == 0 and err.value.error_code == "connection_error"
    assert "http://localhost:6381, the default" in err.value.message and "FLASHBULB_URL" in err.value.message
    assert "Connection refused" in err.value.message and isinstance(err.value, FlashbulbError)


def test_an_unreachable_url_from_the_variable_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLASHBULB_URL", "http://127.0.0.1:9")  # the discard port: nothing listens
    with pytest.raises(FlashbulbConnectionError, match=r"cannot reach Flashbulb at http://127\.0\.0\.1:9 \(from FLASHBULB_URL\)"):
        Flashbulb(timeout=5).health_live()


async def test_the_async_client_reads_the_variables_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLASHBULB_URL", "http://127.0.0.1:9")
    async with AsyncFlashbulb(timeout=5) as client:
        with pytest.raises(FlashbulbConnectionError, match="from FLASHBULB_URL"):
            await client.health_live()


def test_a_url_without_a_scheme_is_refused_naming_where_it_came_from(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLASHBULB_URL", "localhost:6381")
    with pytest.raises(ValueError, match=r"FLASHBULB_URL must be an http:// or https:// URL .* not 'localhost:6381'"):
        Flashbulb()


def test_a_live_server_is_reached_through_the_variables_alone(server, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLASHBULB_URL", server.url)
    monkeypatch.setenv("FLASHBULB_API_KEY", server.admin_key)
    with Flashbulb() as fb:
        assert fb.whoami().role == "admin"


def test_a_missing_key_says_how_to_give_one(server) -> None:
    with pytest.raises(FlashbulbError) as err:
        Flashbulb(base_url=server.url).whoami()
    assert err.value.status == 401 and err.value.error_code == "unauthenticated"
    assert "no API key was given: pass api_key=... or set FLASHBULB_API_KEY" in err.value.message


def test_a_refused_key_says_where_it_came_from(server, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLASHBULB_API_KEY", "fb_live_not_a_key")
    with pytest.raises(FlashbulbError, match="the key came from FLASHBULB_API_KEY"):
        Flashbulb(base_url=server.url).whoami()


def test_ensure_workspace_creates_it_once_and_scopes_the_client(admin: Flashbulb) -> None:
    slug = f"py-ensure-{uuid.uuid4().hex[:8]}"
    try:
        first = admin.ensure_workspace(slug)
        m = first.remember(content="kept in the ensured workspace")
        again = admin.ensure_workspace(slug)
        assert again.get(m.memory_id).content == "kept in the ensured workspace"
        assert [w.slug for w in admin.workspaces_list().workspaces].count(slug) == 1
    finally:
        admin.workspaces_delete(slug)
