/**
 * Times over REST and MCP: every field where a caller writes a point in time takes integer
 * microseconds or an ISO 8601 string (model/time), a bad string is a 400 naming the field and the
 * fault, and replies carry an `_iso` twin beside each microsecond integer.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';

const iso = (us: number): string =>
  new Date(Math.floor(us / 1000))
    .toISOString()
    .replace('Z', `${String(us % 1000).padStart(3, '0')}Z`);
const day = (offsetDays: number): string =>
  new Date(Date.now() + offsetDays * 86_400_000).toISOString().slice(0, 10);

describe('times written as ISO 8601 or microseconds', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.stop();
  });

  it('remember and revise take expires_at_us or its alias expires_at as ISO text; the reply has ISO twins', async () => {
    const at = new Date(Date.now() + 3_600_000);
    at.setUTCMilliseconds(250);
    const text = at.toISOString().replace('Z', '+00:00');
    const a = await t.inject('POST', '/v1/memories', {
      body: { content: 'expires in an hour', expires_at: text },
    });
    expect(a.status, a.text).toBe(201);
    expect(a.body.expires_at).toBe(at.getTime() * 1000);
    expect(a.body.expires_at_iso).toBe(iso(at.getTime() * 1000));
    expect(a.body.created_at_iso).toBe(iso(a.body.created_at));
    expect(a.body.updated_at_iso).toBe(iso(a.body.updated_at));
    expect(a.body.last_accessed_at_iso).toBe(iso(a.body.last_accessed_at));

    const b = await t.inject('PUT', `/v1/revise/${a.body.memory_id}`, {
      body: { expires_at_us: day(2) },
    });
    expect(b.status, b.text).toBe(200);
    expect(b.body.expires_at_iso).toBe(`${day(2)}T00:00:00.000000Z`);
    const never = await t.inject('POST', '/v1/memories', { body: { content: 'kept forever' } });
    expect(never.body.expires_at).toBeNull();
    expect(never.body.expires_at_iso).toBeNull();
  });

  it('a bad time is a 400 naming the field and what is wrong', async () => {
    const cases: Array<[string, string, object, RegExp]> = [
      [
        'POST',
        '/v1/memories',
        { content: 'x', expires_at: '2031-03-01T09:30:00' },
        /^expires_at '2031-03-01T09:30:00' has no UTC offset/,
      ],
      [
        'POST',
        '/v1/memories',
        { content: 'x', expires_at_us: '2031-02-30' },
        /^expires_at_us '2031-02-30': day 30 does not exist \(February 2031 has 28 days\)/,
      ],
      [
        'POST',
        '/v1/memories',
        { content: 'x', expires_at: '2001-01-01T00:00:00Z' },
        /^expires_at '2001-01-01T00:00:00Z' is not in the future/,
      ],
      [
        'POST',
        '/v1/memories',
        { content: 'x', expires_at: day(3), expires_at_us: day(4) },
        /give expires_at_us or expires_at, not both/,
      ],
      [
        'POST',
        '/v1/recall',
        { cue: 'x', strategies: ['temporal'], time_range: { start: 'yesterday' } },
        /^time_range\.start 'yesterday' is not a time/,
      ],
      [
        'POST',
        '/v1/recall',
        {
          cue: 'x',
          strategies: [{ strategy: 'temporal', time_range: { end_us: '2026-03-01T25:00:00Z' } }],
        },
        /^strategies\[0\]\.time_range\.end_us '2026-03-01T25:00:00Z': 25:00:00 is not a time of day/,
      ],
      [
        'POST',
        '/v1/recall',
        {
          cue: 'x',
          strategies: ['temporal'],
          time_range: { start: '2026-03-02', end: '2026-03-01' },
        },
        /time_range: the start .* must not be after the end/,
      ],
      [
        'POST',
        '/v1/forget',
        { staleness_threshold_us: '1700000000000000' },
        /^staleness_threshold_us '1700000000000000' is a number in a string/,
      ],
      ['POST', '/v1/reflect', { since: '2026-3-1' }, /^since '2026-3-1' is not a time/],
      [
        'POST',
        '/v1/recall',
        {
          cue: 'x',
          strategies: ['similarity'],
          filter: { created_at: { $gte: '2026-03-01T00:00' } },
        },
        /^filter\.created_at\.\$gte '2026-03-01T00:00': give the seconds too/,
      ],
    ];
    for (const [method, path, body, message] of cases) {
      const res = await t.inject(method, path, { body });
      expect(res.status, `${JSON.stringify(body)}: ${res.text}`).toBe(400);
      expect(res.body.error_code).toBe('invalid_input');
      expect(res.body.message).toMatch(message);
    }
  });

  it('time_range, filters, forget and reflect read ISO times as the microseconds they name', async () => {
    const lines = [
      {
        memory: {
          content: 'the launch was planned in January',
          created_at: '2025-01-10T12:00:00Z',
        },
      },
      {
        memory: {
          content: 'the launch slipped in February',
          created_at: '2025-02-10T12:00:00+01:00',
          last_accessed_at: '2025-02-10',
        },
      },
      {
        memory: {
          content: 'the launch happened in March',
          created_at: Date.UTC(2025, 2, 10) * 1000,
        },
      },
    ];
    const ws = await t.inject('POST', '/v1/workspaces', { body: { slug: 'times' } });
    expect(ws.status, ws.text).toBe(201);
    expect(ws.body.workspace.created_at_iso).toBe(iso(ws.body.workspace.created_at));
    const done = await t.inject('POST', '/v1/workspaces/times/import', {
      raw: lines.map((l) => JSON.stringify(l)).join('\n'),
      headers: { 'content-type': 'application/x-ndjson' },
    });
    expect(done.body).toMatchObject({ imported: 3, error_count: 0 });

    const window = await t.inject('POST', '/v1/workspaces/times/recall', {
      body: {
        cue: 'launch',
        strategies: ['temporal'],
        time_range: { start: '2025-02-01', end: '2025-02-28T23:59:59.999999Z' },
      },
    });
    expect(window.body.results.map((h: any) => h.memory.content)).toEqual([
      'the launch slipped in February',
    ]);
    const hit = window.body.results[0];
    expect(hit.memory.created_at_iso).toBe('2025-02-10T11:00:00.000000Z');
    expect(hit.strategy_details[0]).toMatchObject({
      strategy: 'temporal',
      timestamp: Date.UTC(2025, 1, 10, 11) * 1000,
      timestamp_iso: '2025-02-10T11:00:00.000000Z',
    });

    const filtered = await t.inject('POST', '/v1/workspaces/times/recall', {
      body: {
        cue: 'launch',
        strategies: ['similarity'],
        filter: { created_at: { $lt: '2025-02-01T00:00:00Z' } },
      },
    });
    expect(filtered.body.results.map((h: any) => h.memory.content)).toEqual([
      'the launch was planned in January',
    ]);

    const listed = await t.inject(
      'GET',
      `/v1/workspaces/times/memories?filter=${encodeURIComponent(JSON.stringify({ created_at: { $gte: '2025-03-10' } }))}`,
    );
    expect(listed.body.memories.map((m: any) => m.content)).toEqual([
      'the launch happened in March',
    ]);
    const between = await t.inject(
      'GET',
      `/v1/workspaces/times/memories?since_us=2025-02-01&until_us=${Date.UTC(2025, 2, 1) * 1000}`,
    );
    expect(between.body.memories.map((m: any) => m.content)).toEqual([
      'the launch slipped in February',
    ]);
    const badQuery = await t.inject(
      'GET',
      '/v1/workspaces/times/memories?since_us=2025-02-01T00:00:00',
    );
    expect(badQuery.status).toBe(400);
    expect(badQuery.body.message).toMatch(/^since_us '2025-02-01T00:00:00' has no UTC offset/);

    // Recall touched every memory's last_accessed_at; the cutoff before that forgets none, a later one all.
    const none = await t.inject('POST', '/v1/workspaces/times/forget', {
      body: { staleness_threshold_us: '2025-02-11T00:00:00Z' },
    });
    expect(none.body.forgotten_count).toBe(0);
    const reflect = await t.inject('POST', '/v1/workspaces/times/reflect', {
      body: { since: '2025-02-01' },
    });
    expect(reflect.status, reflect.text).toBe(200);
    expect(reflect.body.memories_processed).toBe(2);
    const all = await t.inject('POST', '/v1/workspaces/times/forget', {
      body: { staleness_threshold_us: day(1) },
    });
    expect(all.body.forgotten_count).toBeGreaterThanOrEqual(3);
  });

  it('edges, keys and MCP replies carry ISO twins too', async () => {
    const a = await t.inject('POST', '/v1/memories', { body: { content: 'cause' } });
    const b = await t.inject('POST', '/v1/memories', {
      body: { content: 'effect', edges: [{ target_id: a.body.memory_id, edge_type: 'caused_by' }] },
    });
    const edges = await t.inject('GET', `/v1/memories/${b.body.memory_id}/edges`);
    expect(edges.body.outgoing[0].timestamp_iso).toBe(iso(edges.body.outgoing[0].timestamp_us));
    const keys = await t.inject('GET', '/v1/keys');
    expect(keys.body.keys[0].created_at_iso).toBe(iso(keys.body.keys[0].created_at));

    const call = await t.inject('POST', '/mcp', {
      headers: { accept: 'application/json, text/event-stream' },
      body: {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'get_memory', arguments: { memory_id: a.body.memory_id } },
      },
    });
    expect(call.status, call.text).toBe(200);
    expect(call.body.result.structuredContent.created_at_iso).toBe(a.body.created_at_iso);
  });
});
