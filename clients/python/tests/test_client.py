"""The synchronous client against a live server: every route reachable, errors typed, streams."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import httpx
import pytest

from flashbulb import HAND_WRITTEN, NOT_REST, OPERATIONS, Flashbulb, FlashbulbError, RetryPolicy, models

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import generate  # noqa: E402


@pytest.fixture(scope="module")
def document(server) -> dict:
    """The live server's OpenAPI document, as JSON."""
    return httpx.get(f"{server.url}/v1/openapi.json", headers={"authorization": f"Bearer {server.admin_key}"}).json()


def test_every_operation_of_the_live_document_has_a_method(document: dict) -> None:
    doc = document
    ops = {op["id"] for op in generate.operations(doc)}
    assert ops == set(OPERATIONS), "regenerate: npm run client:generate"
    from flashbulb import AsyncFlashbulb
    for op in ops - NOT_REST:
        name = HAND_WRITTEN.get(op, generate.ident(op))
        assert callable(getattr(Flashbulb, name, None)), f"Flashbulb has no method for {op}"
        assert callable(getattr(AsyncFlashbulb, name, None)), f"AsyncFlashbulb has no method for {op}"


def test_the_generated_module_matches_the_live_document(document: dict) -> None:
    current = (Path(generate.DEFAULT_OUT)).read_text(encoding="utf-8")
    assert generate.generate(document) == current, "stale: run `npm run client:generate`"


def test_the_reply_models_are_what_datamodel_code_generator_makes_of_the_live_document(document: dict) -> None:
    current = Path(generate.MODELS_OUT).read_text(encoding="utf-8")
    assert generate.models(document) == current, "stale: run `npm run client:generate`"


def test_every_json_reply_has_a_model_and_every_method_returns_it() -> None:
    import typing
    doc = json.loads(Path(generate.DEFAULT_IN).read_text(encoding="utf-8"))
    for op in generate.operations(doc):
        if op["id"] in HAND_WRITTEN or op["id"] in NOT_REST or op["response"] != "json":
            continue
        name = generate.reply_model(op)
        assert name and hasattr(models, name), f"{op['id']}: no reply model"
        hints = typing.get_type_hints(getattr(Flashbulb, generate.ident(op["id"])))
        assert hints["return"] is getattr(models, name), op["id"]


def test_replies_from_a_newer_server_still_read(fb: Flashbulb) -> None:
    """Unknown fields are kept, an enum value and a recall detail the client does not know are read."""
    memory = fb.remember(content="c").model_dump(mode="json")  # every field today's server sends
    hit = {"memory": {**memory, "kind": "conversation", "mood": "calm"}, "score": 1, "relevance": 0.5,
           "strategy_details": [{"strategy": "similarity", "distance": 0.1, "similarity": 0.9, "relevance": 0.5},
                                {"strategy": "telepathic", "rank": 1}]}

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"results": [hit], "strategy_errors": [], "took_us": 12})

    client = Flashbulb(base_url="http://fb.test", http_client=httpx.Client(transport=httpx.MockTransport(handler)))
    reply = client.recall(cue="x")
    assert reply.results[0].memory.kind == "conversation" and reply.results[0].memory.mood == "calm"  # type: ignore[attr-defined]
    assert reply.took_us == 12  # type: ignore[attr-defined]
    assert reply.results[0].strategy_details[1] == {"strategy": "telepathic", "rank": 1}
    assert reply.results[0].memory.created_at == memory["created_at"] and isinstance(reply.results[0].memory.created_at, int)
    assert reply.results[0].memory.created_at_iso.year >= 2026


def test_a_model_can_be_sent_back_as_json(fb: Flashbulb, admin: Flashbulb) -> None:
    m = fb.remember(content="Dana keeps bees", context={"source": "chat"})
    target = f"{fb._settings.workspace}-models"
    admin.workspaces_create(slug=target)
    try:
        summary = admin.with_workspace(target).import_([{"memory": m, "versions": [], "edges": []}])
        assert summary.imported == 1 and summary.error_count == 0, summary
        assert admin.with_workspace(target).get(m.memory_id).context == {"source": "chat"}
    finally:
        admin.workspaces_delete(target)


def test_remember_get_recall_revise_forget(fb: Flashbulb) -> None:
    m = fb.remember(content="Alice prefers green tea in the morning", importance=0.8, context={"source": "chat"}, entity_id="alice")
    assert isinstance(m, models.Memory)
    assert m.content == "Alice prefers green tea in the morning" and m.entity_id == "alice" and m.kind == "episode"
    assert fb.get(m.memory_id).memory_id == m.memory_id
    reply = fb.recall(cue="green tea", strategies=["similarity"], top_k=3)
    assert isinstance(reply, models.RecallResponse) and isinstance(reply.results[0], models.RecallHit)
    assert reply.results[0].memory.memory_id == m.memory_id
    revised = fb.revise(m.memory_id, content="Alice drinks coffee now", context_mode="merge", context={"checked": True})
    assert revised.content == "Alice drinks coffee now" and revised.context == {"source": "chat", "checked": True}
    assert fb.forget(memory_ids=[m.memory_id]).forgotten_count == 1
    with pytest.raises(FlashbulbError) as err:
        fb.get(m.memory_id)
    assert err.value.status == 404 and err.value.error_code == "not_found"


def test_a_field_left_out_is_not_sent_and_none_sends_null(fb: Flashbulb) -> None:
    m = fb.remember(content="temporary door code", ttl_s=3600)
    assert isinstance(m.expires_at, int) and m.expires_at_iso is not None
    kept = fb.revise(m.memory_id, expires_at_us=None)
    assert kept.expires_at is None


def test_bad_input_raises_with_the_servers_error_code(fb: Flashbulb) -> None:
    with pytest.raises(FlashbulbError) as err:
        fb.remember(content="x", importance=7)
    assert err.value.status == 400 and err.value.error_code == "invalid_input"
    assert "importance" in err.value.message


def test_list_takes_a_filter_object_and_pages(fb: Flashbulb) -> None:
    for i in range(3):
        fb.remember(content=f"note {i}", context={"n": i})
    page = fb.list(filter=json.dumps({"context.n": {"$gte": 1}}), limit=1)
    assert len(page.memories) == 1 and page.next_cursor
    rest = fb.list(filter=json.dumps({"context.n": {"$gte": 1}}), cursor=page.next_cursor)
    assert [x.context["n"] for x in page.memories + rest.memories] == [1, 2]


def test_workspaces_are_a_parameter_or_a_scoped_client(server, admin: Flashbulb, workspace: str) -> None:
    scoped = Flashbulb(base_url=server.url, api_key=server.admin_key, workspace=workspace)
    m = scoped.remember(content="only in this workspace")
    assert admin.with_workspace(workspace).get(m.memory_id).memory_id == m.memory_id
    with pytest.raises(FlashbulbError):
        admin.get(m.memory_id)  # the default workspace does not hold it
    key = admin.keys_create(workspace=workspace, role="workspace").api_key
    tenant = Flashbulb(base_url=server.url, api_key=key)
    assert tenant.whoami().workspace.slug == workspace
    assert tenant.get(m.memory_id).content == "only in this workspace"


def test_subscribe_feed_push_close(fb: Flashbulb) -> None:
    fb.remember(content="Alice loves hiking in the Alps every summer", entity_id="alice")
    with fb.subscribe(confidence_threshold=0.1, entity_id="alice") as sub:
        sub.feed("We talked about hiking in the Alps with Alice. ")
        push = next(iter(sub))
        assert isinstance(push, models.Push) and "hiking" in push.memory.content
        sub.close()
        assert list(sub) == [] and sub.closed_reason == "closed"


def test_export_then_import_round_trip(fb: Flashbulb, admin: Flashbulb) -> None:
    for text in ("first", "second", "third"):
        fb.remember(content=f"the {text} memory")
    lines = list(fb.export(embeddings=True))
    assert sorted(line["memory"]["content"] for line in lines) == ["the first memory", "the second memory", "the third memory"]
    target = f"{fb._settings.workspace}-copy"
    admin.workspaces_create(slug=target)
    try:
        summary = admin.with_workspace(target).import_(lines)
        assert summary.imported == 3 and summary.error_count == 0
        again = admin.with_workspace(target).import_(json.dumps(line) for line in lines)
        assert again.skipped == 3
    finally:
        admin.workspaces_delete(target)


def test_upload_documents(fb: Flashbulb) -> None:
    reply = fb.upload({"notes/tea.md": "# Tea\n\nAlice prefers green tea in the morning.\n"})
    assert reply.uploaded == 1 and reply.files[0].file_path == "notes/tea.md" and reply.files[0].status == "created"


def test_text_and_health_routes(admin: Flashbulb) -> None:
    assert "flashbulb_" in admin.metrics()
    assert admin.health_live().status == "alive"


def test_retries_503_and_429_only_honouring_retry_after() -> None:
    calls: list[int] = []
    answers = [httpx.Response(503, headers={"retry-after": "0"}, json={"error_code": "unavailable", "message": "draining"}),
               httpx.Response(429, headers={"retry-after": "0"}, json={"error_code": "rate_limited", "message": "slow down"}),
               httpx.Response(200, json={"status": "alive"})]

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        return answers[len(calls) - 1]

    client = Flashbulb(base_url="http://fb.test", http_client=httpx.Client(transport=httpx.MockTransport(handler)))
    assert client.health_live().status == "alive" and len(calls) == 3

    def bad(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        return httpx.Response(400, json={"error_code": "invalid_input", "message": "no"})

    calls.clear()
    client = Flashbulb(base_url="http://fb.test", http_client=httpx.Client(transport=httpx.MockTransport(bad)), retry=RetryPolicy(retries=5))
    with pytest.raises(FlashbulbError):
        client.health_live()
    assert len(calls) == 1, "a 400 is not retried"
