#!/usr/bin/env python3
"""Compatibility suite: drive a running Flashbulb through the REAL `hebbs` Python SDK.

The SDK (PyPI `hebbs==0.4.1`, class `HebbsClient`) is used exactly as a HEBBS user would use it;
nothing here builds protobuf messages by hand except where the SDK itself offers no wrapper.
Run it through `test/compat/run.sh`, which prepares a virtual environment and passes:

  FLASHBULB_HOST            server host (default 127.0.0.1)
  FLASHBULB_GRPC_PORT       gRPC port (default 6380)
  FLASHBULB_API_KEY         API key (optional; leave unset when authentication is off)
  FLASHBULB_WORKSPACE       optional: a workspace slug other than `default` ...
  FLASHBULB_WORKSPACE_KEY   ... and a workspace key for it (enables the tenant checks)
  --descriptor PATH         optional: FileDescriptorSet of proto/hebbs.proto (schema check)

Every test works under entity ids unique to this run, so it can run against a server that already
holds data. Exit status 0 when every test passed.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import sys
import time
import traceback
import uuid
from typing import Any, Awaitable, Callable

import grpc
from google.protobuf import descriptor_pb2

import hebbs
from hebbs import (
    Edge,
    EdgeType,
    HebbsAuthenticationError,
    HebbsClient,
    HebbsError,
    HebbsInvalidArgumentError,
    HebbsNotFoundError,
    Memory,
    MemoryKind,
    RecallStrategyConfig,
    ScoringWeights,
)
from hebbs._generated import hebbs_pb2, hebbs_pb2_grpc

HOST = os.environ.get("FLASHBULB_HOST", "127.0.0.1")
PORT = os.environ.get("FLASHBULB_GRPC_PORT", "6380")
ADDRESS = f"{HOST}:{PORT}"
API_KEY = os.environ.get("FLASHBULB_API_KEY") or None
WORKSPACE = os.environ.get("FLASHBULB_WORKSPACE") or None
WORKSPACE_KEY = os.environ.get("FLASHBULB_WORKSPACE_KEY") or None
RUN = uuid.uuid4().hex[:8]

TESTS: list[tuple[str, Callable[[], Awaitable[None]]]] = []


class Skip(Exception):
    """A test that cannot run here (says why)."""


def test(fn: Callable[[], Awaitable[None]]) -> Callable[[], Awaitable[None]]:
    TESTS.append((fn.__name__, fn))
    return fn


def client(**kw: Any) -> HebbsClient:
    """A HebbsClient for the server under test; `api_key=""` means "send no key"."""
    kw.setdefault("api_key", API_KEY or "")
    return HebbsClient(ADDRESS, **kw)


def entity(name: str) -> str:
    return f"{name}-{RUN}"


async def raises(exc: type[BaseException], aw: Awaitable[Any]) -> BaseException:
    try:
        result = await aw
    except BaseException as e:  # noqa: BLE001 - checked below
        assert type(e) is exc, f"expected {exc.__name__}, got {type(e).__name__}: {e}"
        return e
    raise AssertionError(f"expected {exc.__name__}, got a result: {result!r}")


def grpc_code(e: BaseException) -> grpc.StatusCode | None:
    cause = e.__cause__
    return cause.code() if isinstance(cause, grpc.RpcError) else None


def close(a: float, b: float, tol: float = 1e-5) -> bool:
    return math.isclose(a, b, rel_tol=0, abs_tol=tol)


def check_memory(m: Memory, *, embedding: bool = True) -> None:
    assert isinstance(m, Memory)
    assert isinstance(m.id, bytes) and len(m.id) == 16, m.id
    assert isinstance(m.created_at, int) and isinstance(m.updated_at, int) and isinstance(m.last_accessed_at, int)
    now_us = time.time_ns() // 1000
    # µs since the epoch, not ms or ns: within a day of now.
    assert abs(now_us - m.created_at) < 86_400 * 1_000_000, (m.created_at, now_us)
    assert m.updated_at >= m.created_at
    assert isinstance(m.access_count, int) and m.access_count >= 0
    assert 0.0 <= m.importance <= 1.0
    assert isinstance(m.kind, MemoryKind) and m.kind is not MemoryKind.UNSPECIFIED
    if embedding:
        assert len(m.embedding) == 384, len(m.embedding)


# ─── schema ──────────────────────────────────────────────────────────────────────────────

DESCRIPTOR_PATH: str | None = None

# Differences Flashbulb documents (HEBBS-WIRE.md "Additions"): Subscribe's request side is a
# stream so one call can also feed and close; server-streaming clients are unaffected on the wire.
ALLOWED_CLIENT_STREAMING = {"SubscribeService.Subscribe"}


def _type_name(name: str) -> str:
    # protoc writes ".hebbs.v1.HealthCheckResponse.ServingStatus", protobuf.js the name relative to
    # its scope ("ServingStatus"); every type name in this file is unique, so the last part decides.
    return name.rsplit(".", 1)[-1]


def _fields(msg: descriptor_pb2.DescriptorProto) -> dict[int, tuple[Any, ...]]:
    out = {}
    for f in msg.field:
        oneof = msg.oneof_decl[f.oneof_index].name if f.HasField("oneof_index") else None
        # proto3 `optional` = a synthetic oneof named "_<field>" (protobuf.js drops the flag itself).
        optional = f.proto3_optional or oneof == f"_{f.name}"
        out[f.number] = (f.name, f.type, f.label, _type_name(f.type_name), optional, None if optional else oneof)
    return out


def _collect(fd: descriptor_pb2.FileDescriptorProto) -> tuple[dict[str, Any], dict[str, Any]]:
    messages: dict[str, descriptor_pb2.DescriptorProto] = {}
    enums: dict[str, dict[str, int]] = {}

    def walk(prefix: str, msgs: Any, ens: Any) -> None:
        for e in ens:
            enums[prefix + e.name] = {v.name: v.number for v in e.value}
        for m in msgs:
            messages[prefix + m.name] = m
            walk(f"{prefix}{m.name}.", m.nested_type, m.enum_type)

    walk("", fd.message_type, fd.enum_type)
    return messages, enums


@test
async def test_schema_matches_the_sdk_descriptor() -> None:
    """proto/hebbs.proto agrees with the schema the SDK was generated from, field by field."""
    if DESCRIPTOR_PATH is None:
        raise Skip("no --descriptor given")
    with open(DESCRIPTOR_PATH, "rb") as fh:
        fds = descriptor_pb2.FileDescriptorSet.FromString(fh.read())
    ours = [f for f in fds.file if f.package == "hebbs.v1"]
    assert len(ours) == 1, [f.package for f in fds.file]
    ours_fd = ours[0]
    sdk_fd = descriptor_pb2.FileDescriptorProto()
    hebbs_pb2.DESCRIPTOR.CopyToProto(sdk_fd)
    assert sdk_fd.package == ours_fd.package == "hebbs.v1"

    sdk_msgs, sdk_enums = _collect(sdk_fd)
    our_msgs, our_enums = _collect(ours_fd)
    problems: list[str] = []
    additions: list[str] = []
    for name, sdk_msg in sdk_msgs.items():
        if name not in our_msgs:
            problems.append(f"message {name} is missing")
            continue
        theirs, mine = _fields(sdk_msg), _fields(our_msgs[name])
        for num, spec in theirs.items():
            if num not in mine:
                problems.append(f"{name}: field {num} ({spec[0]}) is missing")
            elif mine[num] != spec:
                problems.append(f"{name}: field {num} differs: HEBBS {spec} vs Flashbulb {mine[num]}")
        additions += [f"{name}.{mine[n][0]} = {n}" for n in mine if n not in theirs]
    for name, values in sdk_enums.items():
        if name not in our_enums:
            problems.append(f"enum {name} is missing")
            continue
        for v, num in values.items():
            if our_enums[name].get(v) != num:
                problems.append(f"enum {name}: {v} = {num} in HEBBS, {our_enums[name].get(v)} in Flashbulb")
    our_services = {s.name: {m.name: m for m in s.method} for s in ours_fd.service}
    for svc in sdk_fd.service:
        for m in svc.method:
            mine_m = our_services.get(svc.name, {}).get(m.name)
            key = f"{svc.name}.{m.name}"
            if mine_m is None:
                problems.append(f"rpc {key} is missing")
                continue
            if (_type_name(m.input_type), _type_name(m.output_type)) != (_type_name(mine_m.input_type), _type_name(mine_m.output_type)):
                problems.append(f"rpc {key}: types differ")
            if m.server_streaming != mine_m.server_streaming:
                problems.append(f"rpc {key}: server_streaming differs")
            if m.client_streaming != mine_m.client_streaming and key not in ALLOWED_CLIENT_STREAMING:
                problems.append(f"rpc {key}: client_streaming differs")
    if additions:
        print("    Flashbulb additions (new field numbers):", ", ".join(sorted(additions)))
    assert not problems, "schema differs from the SDK's:\n      " + "\n      ".join(problems)


@test
async def test_sdk_runtime_requirements() -> None:
    """The SDK's generated code needs grpcio >= its GRPC_GENERATED_VERSION and protobuf >= 6.31.1."""
    from importlib.metadata import version

    def v(s: str) -> tuple[int, ...]:
        return tuple(int(p) for p in s.split(".")[:3] if p.isdigit())

    assert v(grpc.__version__) >= v(hebbs_pb2_grpc.GRPC_GENERATED_VERSION), (grpc.__version__, hebbs_pb2_grpc.GRPC_GENERATED_VERSION)
    assert v(version("protobuf")) >= (6, 31, 1), version("protobuf")
    assert version("hebbs") == "0.4.1", version("hebbs")


# ─── health ──────────────────────────────────────────────────────────────────────────────


@test
async def test_health() -> None:
    async with client() as h:
        s = await h.health()
        assert s.serving is True, s
        assert isinstance(s.version, str) and s.version, s
        assert isinstance(s.memory_count, int) and s.memory_count >= 0, s
        assert isinstance(s.uptime_seconds, int) and s.uptime_seconds >= 0, s
        await h.remember("counted by health", entity_id=entity("health"))
        assert await h.count() >= s.memory_count + 1
    # Health needs no key, whatever the server's authentication setting.
    async with client(api_key="") as anon:
        assert (await anon.health()).serving is True


# ─── remember / get ──────────────────────────────────────────────────────────────────────


@test
async def test_remember_with_context_and_get() -> None:
    ctx = {"tier": "enterprise", "seats": 250, "ratio": 0.25, "active": True, "note": None, "tags": ["crm", "sales"], "owner": {"name": "Ada", "level": 3}}
    async with client() as h:
        before = time.time_ns() // 1000
        m = await h.remember("Acme Corp uses Salesforce for CRM", importance=0.8, context=ctx, entity_id=entity("acme"))
        check_memory(m)
        assert before - 1_000_000 <= m.created_at <= time.time_ns() // 1000 + 1_000_000
        assert m.content == "Acme Corp uses Salesforce for CRM"
        assert close(m.importance, 0.8)
        assert m.context == ctx, m.context
        assert m.entity_id == entity("acme")
        assert m.kind is MemoryKind.EPISODE
        assert m.source_memory_ids == []

        got = await h.get(m.id)
        check_memory(got)
        assert got.id == m.id and got.content == m.content and got.context == ctx and got.entity_id == m.entity_id
        assert got.created_at == m.created_at
        assert got.embedding == m.embedding

        plain = await h.remember("no extras at all")
        check_memory(plain)
        assert close(plain.importance, 0.5) and plain.context == {} and plain.entity_id is None


@test
async def test_remember_with_edges() -> None:
    async with client() as h:
        target = await h.remember("the outage began at noon", entity_id=entity("edges"))
        for et in [e for e in EdgeType if e is not EdgeType.UNSPECIFIED]:
            m = await h.remember(f"linked by {et.value}", entity_id=entity("edges"), edges=[Edge(target.id, et, confidence=0.75)])
            check_memory(m)
        caused = await h.remember("customers complained", edges=[Edge(target.id, EdgeType.CAUSED_BY)], entity_id=entity("edges"))
        # CAUSED_BY only: background contradiction checks may link similar memories too.
        out = await h.recall("why", strategies=[RecallStrategyConfig("causal", seed_memory_id=caused.id, max_depth=1, edge_types=[EdgeType.CAUSED_BY])])
        assert [r.memory.id for r in out.results] == [target.id], out
        assert out.results[0].strategy_details[0].depth == 1

        await raises(HebbsInvalidArgumentError, h.remember("dangling", edges=[Edge(b"\x01" * 16, EdgeType.RELATED_TO)]))
        await raises(HebbsInvalidArgumentError, h.remember("unspecified edge type", edges=[Edge(target.id, EdgeType.UNSPECIFIED)]))


@test
async def test_remember_kind_through_the_service_client() -> None:
    # HebbsClient.remember() has no `kind`; the SDK's MemoryServiceClient does.
    async with client() as h:
        doc = await h._memory.remember("a whole document", kind=MemoryKind.DOCUMENT, entity_id=entity("kind"))
        assert doc.kind is MemoryKind.DOCUMENT
        assert (await h.get(doc.id)).kind is MemoryKind.DOCUMENT


@test
async def test_get_errors() -> None:
    async with client() as h:
        await raises(HebbsNotFoundError, h.get(b"\xab" * 16))
        await raises(HebbsInvalidArgumentError, h.get(b"\x01" * 15))
        await raises(HebbsInvalidArgumentError, h.get(b""))


@test
async def test_remember_errors() -> None:
    async with client() as h:
        await raises(HebbsInvalidArgumentError, h.remember(""))
        await raises(HebbsInvalidArgumentError, h.remember("too important", importance=1.5))


# ─── recall ──────────────────────────────────────────────────────────────────────────────


@test
async def test_recall_each_strategy() -> None:
    e = entity("recall")
    async with client() as h:
        a = await h.remember("the deal with acme closed at 100k", entity_id=e, context={"stage": "won"})
        await asyncio.sleep(0.002)
        b = await h.remember("acme asked for a discount on seats", entity_id=e, edges=[Edge(a.id, EdgeType.FOLLOWED_BY)])
        await asyncio.sleep(0.002)
        c = await h.remember("lunch was pasta", entity_id=e)

        # Default: similarity only; the SDK puts entity_id into each strategy config.
        sim = await h.recall("acme deal closed", entity_id=e)
        assert sim.strategy_errors == []
        assert sim.results and sim.results[0].memory.id == a.id, [r.memory.content for r in sim.results]
        for r in sim.results:
            check_memory(r.memory)
            assert r.memory.entity_id == e
            d = r.strategy_details[0]
            assert d.strategy == "similarity" and d.distance is not None and 0.0 <= d.relevance <= 1.0, d
            assert d.timestamp is None and d.depth is None

        tmp = await h.recall("anything", strategies=["temporal"], entity_id=e)
        assert [r.memory.id for r in tmp.results] == [c.id, b.id, a.id]
        assert [r.strategy_details[0].rank for r in tmp.results] == [1, 2, 3]
        assert tmp.results[0].strategy_details[0].timestamp == c.created_at

        ranged = await h.recall("anything", strategies=[RecallStrategyConfig("temporal", time_range=(a.created_at, b.created_at))], entity_id=e)
        assert [r.memory.id for r in ranged.results] == [b.id, a.id]

        cau = await h.recall("what followed", strategies=[RecallStrategyConfig("causal", seed_memory_id=b.id, edge_types=[EdgeType.FOLLOWED_BY], max_depth=2)])
        assert cau.strategy_errors == [], cau.strategy_errors
        assert [r.memory.id for r in cau.results] == [a.id]
        assert cau.results[0].strategy_details[0].strategy == "causal" and cau.results[0].strategy_details[0].depth == 1

        ana = await h.recall("the deal closed", strategies=[RecallStrategyConfig("analogical", analogical_alpha=0.7)], entity_id=e, cue_context={"stage": "lost"})
        assert ana.results
        for r in ana.results:
            d = r.strategy_details[0]
            assert d.strategy == "analogical" and d.embedding_similarity is not None and d.structural_similarity is not None, d

        multi = await h.recall("acme deal", strategies=["similarity", "temporal", "analogical"], entity_id=e, top_k=2)
        assert multi.results
        counts = {s: sum(1 for r in multi.results for d in r.strategy_details if d.strategy == s) for s in ("similarity", "temporal", "analogical")}
        assert counts == {"similarity": 2, "temporal": 2, "analogical": 2}, counts


@test
async def test_recall_top_k_per_strategy_and_fallback() -> None:
    e = entity("topk")
    async with client() as h:
        for i in range(6):
            await h.remember(f"status update number {i}", entity_id=e)
        assert len((await h.recall("status", strategies=["temporal"], entity_id=e, top_k=4)).results) == 4
        own = await h.recall("status", strategies=[RecallStrategyConfig("temporal", top_k=2)], entity_id=e, top_k=5)
        assert len(own.results) == 2
        assert len((await h.recall("status", strategies=["temporal"], entity_id=e)).results) == 6


@test
async def test_recall_scoring_weights() -> None:
    e = entity("weights")
    async with client() as h:
        await h.remember("weights make the score", entity_id=e, importance=0.3)
        # Only the four weights are sent (max_age_us / reinforcement_cap stay 0 = default).
        rel = await h.recall("weights make the score", entity_id=e, scoring_weights=ScoringWeights(1.0, 0.0, 0.0, 0.0))
        for r in rel.results:
            assert close(r.score, r.strategy_details[0].relevance), (r.score, r.strategy_details[0].relevance)
        rec = await h.recall("weights make the score", entity_id=e, scoring_weights={"w_relevance": 0.0, "w_recency": 1.0, "w_importance": 0.0, "w_reinforcement": 0.0})
        assert rec.results[0].score > 0.999, rec.results[0].score
        aged = await h.recall("weights make the score", entity_id=e, scoring_weights=ScoringWeights(0.0, 1.0, 0.0, 0.0, max_age_us=1))
        assert close(aged.results[0].score, 0.0), aged.results[0].score
        imp = await h.recall("weights make the score", entity_id=e, scoring_weights=ScoringWeights(0.0, 0.0, 1.0, 0.0))
        assert close(imp.results[0].score, 0.3), imp.results[0].score


@test
async def test_recall_errors_and_strategy_errors() -> None:
    e = entity("causal-none")
    async with client() as h:
        await h.remember("an island without edges", entity_id=e)
        out = await h.recall("island", strategies=["causal"], entity_id=e)
        assert out.results == []
        assert [s.strategy for s in out.strategy_errors] == ["causal"] and out.strategy_errors[0].message, out.strategy_errors
        mixed = await h.recall("island", strategies=["similarity", "causal"], entity_id=e)
        assert [r.memory.content for r in mixed.results] == ["an island without edges"]
        assert [s.strategy for s in mixed.strategy_errors] == ["causal"]
        await raises(HebbsInvalidArgumentError, h.recall("", strategies=["similarity"]))
        # An unknown strategy name becomes UNSPECIFIED_STRATEGY in the SDK.
        await raises(HebbsInvalidArgumentError, h.recall("island", strategies=["telepathy"]))


# ─── prime ───────────────────────────────────────────────────────────────────────────────


@test
async def test_prime() -> None:
    e = entity("prime")
    async with client() as h:
        await h.remember("pricing objection about seats", entity_id=e)
        for i in range(5):
            await h.remember(f"routine call {i}", entity_id=e)
        await h.remember("someone else entirely", entity_id=entity("prime-other"))
        out = await h.prime(e)
        assert len(out.results) == 6, [r.memory.content for r in out.results]
        assert out.temporal_count + out.similarity_count == 6
        for r in out.results:
            check_memory(r.memory)
            assert r.memory.entity_id == e
            assert {d.strategy for d in r.strategy_details} <= {"temporal", "similarity"}
        few = await h.prime(e, max_memories=4, similarity_cue="pricing objection seats")
        assert len(few.results) == 4 and few.temporal_count == 2 and few.similarity_count == 2, few
        assert "pricing objection about seats" in [r.memory.content for r in few.results]
        rel = await h.prime(e, max_memories=2, similarity_cue="pricing objection about seats", scoring_weights=ScoringWeights(1.0, 0.0, 0.0, 0.0))
        best = max(rel.results, key=lambda r: r.score)
        assert best.memory.content == "pricing objection about seats" and close(best.score, 1.0), best
        empty = await h.prime(entity("nobody"))
        assert empty.results == [] and empty.temporal_count == 0 and empty.similarity_count == 0


# ─── revise ──────────────────────────────────────────────────────────────────────────────


@test
async def test_revise() -> None:
    async with client() as h:
        m = await h.remember("the plan is alpha", importance=0.4, context={"stage": "draft", "owner": "ada"}, entity_id=entity("rev"))
        r = await h.revise(m.id, content="the plan is omega", context={"stage": "final"})
        check_memory(r)
        assert r.id == m.id
        assert r.content == "the plan is omega"
        assert r.kind is MemoryKind.REVISION
        # The SDK sends no context_mode: UNSPECIFIED merges.
        assert r.context == {"stage": "final", "owner": "ada"}, r.context
        assert r.embedding != m.embedding
        r2 = await h.revise(m.id, importance=0.9, entity_id=entity("rev2"))
        assert close(r2.importance, 0.9) and r2.entity_id == entity("rev2") and r2.content == "the plan is omega"
        assert (await h.get(m.id)).content == "the plan is omega"
        await raises(HebbsNotFoundError, h.revise(b"\xcd" * 16, content="nobody"))
        await raises(HebbsInvalidArgumentError, h.revise(m.id))
        await raises(HebbsInvalidArgumentError, h.revise(b"\x01" * 3, content="short id"))


# ─── forget ──────────────────────────────────────────────────────────────────────────────


@test
async def test_forget() -> None:
    e = entity("forget")
    async with client() as h:
        a = await h.remember("forget me by id", entity_id=e)
        b = await h.remember("forget me by entity", entity_id=e)
        c = await h.remember("forget me with my history", entity_id=e)
        await h.revise(c.id, content="forget me with my history, revised")
        res = await h.forget(memory_ids=[a.id])
        assert (res.forgotten_count, res.cascade_count, res.tombstone_count, res.truncated) == (1, 0, 1, False), res
        await raises(HebbsNotFoundError, h.get(a.id))
        res = await h.forget(entity_id=e)
        assert (res.forgotten_count, res.cascade_count, res.tombstone_count) == (2, 1, 3), res
        await raises(HebbsNotFoundError, h.get(b.id))
        await raises(HebbsNotFoundError, h.get(c.id))
        none = await h.forget(memory_ids=[b"\xee" * 16])
        assert none.forgotten_count == 0
        await raises(HebbsInvalidArgumentError, h.forget())


# ─── insights ────────────────────────────────────────────────────────────────────────────


@test
async def test_insights() -> None:
    e = entity("insights")
    async with client() as h:
        assert await h.insights(entity_id=e) == []
        listed = await h.insights()
        assert isinstance(listed, list)
        await h.remember("an episode, not an insight", entity_id=e)
        ins = await h._memory.remember("customers in retail churn after price rises", kind=MemoryKind.INSIGHT, entity_id=e, context={"confidence": 0.9})
        found = await h.insights(entity_id=e)
        assert [m.id for m in found] == [ins.id], found
        assert found[0].kind is MemoryKind.INSIGHT
        assert len(await h.insights(entity_id=e, max_results=1)) == 1


# ─── reflect and the rest of ReflectService ──────────────────────────────────────────────
# Reflection is performed by the service; the deprecated agent-driven flows still answer.


@test
async def test_reflect_writes_insights_for_a_theme() -> None:
    e = entity("reflect")
    async with client() as h:
        for i in range(6):
            await h.remember(f"the espresso machine in the office kitchen broke again on day {i}", entity_id=e)
        r = await h.reflect(entity_id=e)
        assert r.memories_processed == 6, r
        assert r.clusters_found >= 1 and r.insights_created >= 1, r
        found = await h.insights(entity_id=e)
        assert len(found) >= 1 and found[0].kind is MemoryKind.INSIGHT, found
        again = await h.reflect(entity_id=e)
        assert again.insights_created == 0, again  # refreshed, not duplicated
        assert len(await h.insights(entity_id=e)) == len(found)
        prep = await h.reflect_prepare(entity_id=e)
        assert prep.session_id and prep.memories_processed == 6 and prep.existing_insight_count >= 1, prep
        await raises(HebbsNotFoundError, h.reflect_commit("01J0000000000000000000000", []))
        assert isinstance(await h.contradiction_prepare(), list)
        await h.contradiction_commit([])


@test
async def test_set_policy_is_unimplemented() -> None:
    # Not "not yet": Flashbulb keeps no per-tenant policies (use forget with criteria).
    async with client() as h:
        e = await raises(HebbsError, h.set_policy(max_snapshots_per_memory=3))
        assert grpc_code(e) == grpc.StatusCode.UNIMPLEMENTED


# ─── subscribe ───────────────────────────────────────────────────────────────────────────
# The SDK calls Subscribe as server-streaming: one SubscribeRequest, then it reads the first
# streamed message as the handshake (subscription_id only), keeps only later messages that have
# `memory`, and feeds / closes with the unary Feed and CloseSubscription.


@test
async def test_subscribe_feed_listen_close() -> None:
    e = entity("sub")
    async with client() as h:
        await h.remember("the quarterly budget review is on friday", entity_id=e)
        await h.remember("an unrelated memory about lunch", entity_id=e)
        sub = await h.subscribe(entity_id=e, confidence_threshold=0.3)
        try:
            assert isinstance(sub.subscription_id, int) and 0 < sub.subscription_id < 2**53, sub.subscription_id
            await sub.feed("Let us talk about the quarterly budget review on friday.")
            pushes = await sub.listen(timeout=5.0, max_pushes=1)
            assert pushes, "no push within 5 s"
            p = pushes[0]
            assert p.subscription_id == sub.subscription_id
            assert p.memory.content == "the quarterly budget review is on friday"
            check_memory(p.memory, embedding=False)  # see test_every_memory_carries_its_embedding
            assert p.sequence_number == 1 and p.confidence >= 0.3 and p.push_timestamp_us > 0, p
            # The same memory is pushed at most once per subscription.
            await sub.feed("Again: the quarterly budget review on friday.")
            assert await sub.listen(timeout=1.0, max_pushes=1) == []
        finally:
            await sub.close()
        # Closed: feeding it again is NOT_FOUND.
        await raises(HebbsNotFoundError, sub.feed("after close"))


# ─── Memory.embedding ────────────────────────────────────────────────────────────────────


@test
async def test_every_memory_carries_its_embedding() -> None:
    """HEBBS fills Memory.embedding (384 floats) wherever a Memory is returned; the SDK exposes it."""
    e = entity("embedding")
    async with client() as h:
        await h._memory.remember("insights carry embeddings too", kind=MemoryKind.INSIGHT, entity_id=e, context={"confidence": 0.8})
        await h.remember("pushes carry the embedding of the memory", entity_id=e)
        missing = []
        [ins] = await h.insights(entity_id=e)
        if len(ins.embedding) != 384:
            missing.append(f"GetInsights: {len(ins.embedding)} floats")
        sub = await h.subscribe(entity_id=e, confidence_threshold=0.3)
        try:
            await sub.feed("Do pushes carry the embedding of the memory?")
            pushes = await sub.listen(timeout=5.0, max_pushes=1)
        finally:
            await sub.close()
        assert pushes, "no push within 5 s"
        if len(pushes[0].memory.embedding) != 384:
            missing.append(f"Subscribe push: {len(pushes[0].memory.embedding)} floats")
        assert not missing, "Memory.embedding not filled: " + "; ".join(missing)


# ─── tenants and keys (only when the server has authentication on) ───────────────────────


@test
async def test_keys() -> None:
    if not API_KEY:
        raise Skip("no FLASHBULB_API_KEY (authentication off)")
    async with client(api_key="") as anon:
        await raises(HebbsAuthenticationError, anon.remember("no key"))
        await raises(HebbsAuthenticationError, anon.get(b"\x01" * 16))
    async with client(api_key="fb_admin_not_a_real_key") as wrong:
        await raises(HebbsAuthenticationError, wrong.recall("wrong key"))


@test
async def test_tenants() -> None:
    if not (API_KEY and WORKSPACE and WORKSPACE_KEY):
        raise Skip("needs FLASHBULB_API_KEY (admin), FLASHBULB_WORKSPACE and FLASHBULB_WORKSPACE_KEY")
    # A workspace key's own workspace applies whatever tenant_id says.
    async with client(api_key=WORKSPACE_KEY, tenant_id="default") as ws_foreign, client(api_key=WORKSPACE_KEY) as ws_own:
        m = await ws_foreign.remember("written by a workspace key naming default", entity_id=entity("tenant"))
        assert (await ws_own.get(m.id)).content == m.content
    # The admin key sees it only by naming that workspace.
    async with client(tenant_id=WORKSPACE) as admin_ws, client() as admin_default:
        assert (await admin_ws.get(m.id)).content == m.content
        await raises(HebbsNotFoundError, admin_default.get(m.id))
    async with client(tenant_id=f"no-such-workspace-{RUN}") as nowhere:
        await raises(HebbsNotFoundError, nowhere.remember("nowhere"))


# ─── runner ──────────────────────────────────────────────────────────────────────────────


async def main() -> int:
    from importlib.metadata import version

    print(
        f"hebbs {version('hebbs')} (its module says {getattr(hebbs, '__version__', '?')}), grpcio {grpc.__version__}, "
        f"protobuf {version('protobuf')} against {ADDRESS}; auth {'on' if API_KEY else 'off'}"
    )
    passed = failed = skipped = 0
    for name, fn in TESTS:
        start = time.perf_counter()
        try:
            await asyncio.wait_for(fn(), timeout=60)
        except Skip as s:
            skipped += 1
            print(f"  SKIP {name}: {s}")
            continue
        except BaseException:  # noqa: BLE001 - report every failure and go on
            failed += 1
            print(f"  FAIL {name}")
            print("    " + traceback.format_exc().replace("\n", "\n    "))
            continue
        passed += 1
        print(f"  ok   {name} ({(time.perf_counter() - start) * 1000:.0f} ms)")
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--descriptor", help="FileDescriptorSet of proto/hebbs.proto")
    parser.add_argument("-k", dest="only", help="run only tests whose name contains this")
    args = parser.parse_args()
    DESCRIPTOR_PATH = args.descriptor
    if args.only:
        TESTS[:] = [(n, f) for n, f in TESTS if args.only in n]
    sys.exit(asyncio.run(main()))
