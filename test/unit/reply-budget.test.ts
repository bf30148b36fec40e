/**
 * Reply budgets (issue 48, item 1): what one request's reads may hold, what one workspace and the
 * process may have in flight, and that a reply over a budget never crosses from the shard. The
 * shards are a stand-in that answers each `list` with `size` bytes of text and honours
 * `maxReplyBytes` the way the shard worker does (protocol/reply-size `answerWithin`), keeping a
 * reply over the first ask for the second so that the read runs once.
 */
import { describe, expect, it } from 'vitest';
import { FlashbulbError } from '../../src/errors/codes.ts';
import { replyBytes } from '../../src/model/json-size.ts';
import {
  answerWithin,
  PARKED_MAX_BYTES,
  PARKED_TTL_MS,
  ParkedReplies,
  parkedToken,
  parkKey,
  tooLargeBytes,
  withinBudget,
} from '../../src/protocol/reply-size.ts';
import type { ShardInput, ShardMethod, ShardOutput } from '../../src/protocol/shard.ts';
import { BudgetedRouter, ReplyBudget } from '../../src/router/reply-budget.ts';
import type { CallOptions, ShardRouter } from '../../src/router/router.ts';

const KB = 1024;

/**
 * Shards whose `list` answers `{ text }` of the size asked for in `input.limit` (KiB), and what
 * crossed back; `runs` counts the lists computed. They keep a too-large reply the way the shard
 * worker does (protocol/reply-size `answerWithin`); with `keepNone`, every kept reply is gone by
 * the second ask (expired, or another owner), so it is computed again.
 */
function fakeShards(opts: { keepNone?: boolean } = {}): {
  router: ShardRouter;
  crossed: number[];
  asks: Array<number | undefined>;
  runs: { n: number };
  parked: ParkedReplies;
} {
  const crossed: number[] = [];
  const asks: Array<number | undefined> = [];
  const runs = { n: 0 };
  let parked = new ParkedReplies();
  const router: ShardRouter = {
    async call<M extends ShardMethod>(
      ws: string,
      method: M,
      input: ShardInput<M>,
      _t?: ArrayBuffer[],
      call: CallOptions = {},
    ): Promise<ShardOutput<M>> {
      if (method !== 'list' && method !== 'remember') throw new Error(`unexpected ${method}`);
      asks.push(call.maxReplyBytes);
      if (opts.keepNone) parked = new ParkedReplies();
      const kib = (input as { limit: number }).limit;
      const { value, bytes } = await answerWithin(parked, parkKey(method, ws), call, async () => {
        runs.n += 1;
        return { text: 'x'.repeat(kib * KB) };
      });
      if (tooLargeBytes(value) === null) crossed.push(replyBytes(value));
      if (bytes !== undefined) call.replyBytes?.(bytes);
      await new Promise((resolve) => setImmediate(resolve));
      return value as ShardOutput<M>;
    },
    broadcast: async () => [],
    inflight: () => 0,
    problems: () => [],
    shutdown: async () => {},
  };
  return {
    router,
    crossed,
    asks,
    runs,
    get parked() {
      return parked;
    },
  };
}

const list = (r: ShardRouter, ws: string, kib: number): Promise<unknown> =>
  r.call(ws, 'list', { limit: kib } as ShardInput<'list'>);

async function refusal(p: Promise<unknown>): Promise<FlashbulbError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(FlashbulbError);
  return err as FlashbulbError;
}

describe('reply budgets', () => {
  it("counts a request's replies until it is released", async () => {
    const budget = new ReplyBudget({
      perRequest: 512 * KB,
      perWorkspace: 2048 * KB,
      total: 4096 * KB,
    });
    const shards = fakeShards();
    const lease = budget.lease();
    const r = new BudgetedRouter(shards.router, lease);
    await list(r, 'a', 10);
    await list(r, 'a', 200);
    expect(lease.used).toBeGreaterThan(210 * KB);
    expect(budget.held('a')).toBe(lease.used);
    expect(budget.held()).toBe(lease.used);
    lease.release();
    expect(budget.held('a')).toBe(0);
    expect(budget.held()).toBe(0);
    lease.release();
    expect(budget.held()).toBe(0);
  });

  it('refuses a reply over the per-request limit without its crossing from the shard', async () => {
    const budget = new ReplyBudget({
      perRequest: 256 * KB,
      perWorkspace: 2048 * KB,
      total: 4096 * KB,
    });
    const shards = fakeShards();
    const r = new BudgetedRouter(shards.router, budget.lease());
    const err = await refusal(list(r, 'a', 300));
    expect(err.code).toBe('payload_too_large');
    expect(err.limit).toBe('FLASHBULB_MAX_REPLY_BYTES');
    expect(err.message).toMatch(
      /over the limit of 262144 bytes per request \(FLASHBULB_MAX_REPLY_BYTES\)/,
    );
    expect(shards.crossed).toEqual([]);
    expect(shards.asks).toEqual([64 * KB]);
    expect(budget.held()).toBe(0);
  });

  it('asks again, with room reserved, for a reply over the first ask that fits', async () => {
    const budget = new ReplyBudget({
      perRequest: 512 * KB,
      perWorkspace: 2048 * KB,
      total: 4096 * KB,
    });
    const shards = fakeShards();
    const r = new BudgetedRouter(shards.router, budget.lease());
    await list(r, 'a', 100);
    expect(shards.asks).toHaveLength(2);
    expect(shards.asks[1]).toBeGreaterThanOrEqual(100 * KB);
    expect(shards.crossed).toHaveLength(1);
    // The second ask took the reply the first computed and kept: the read ran once.
    expect(shards.runs.n).toBe(1);
    expect(shards.parked.bytes).toBe(0);
  });

  it('computes the reply again when the kept one is gone by the second ask', async () => {
    const budget = new ReplyBudget({
      perRequest: 512 * KB,
      perWorkspace: 2048 * KB,
      total: 4096 * KB,
    });
    const shards = fakeShards({ keepNone: true });
    const r = new BudgetedRouter(shards.router, budget.lease());
    const out = (await list(r, 'a', 100)) as { text: string };
    expect(out.text).toHaveLength(100 * KB);
    expect(shards.asks).toHaveLength(2);
    expect(shards.runs.n).toBe(2);
  });

  it('keeps no reply it would not make room for', async () => {
    const budget = new ReplyBudget({
      perRequest: 256 * KB,
      perWorkspace: 2048 * KB,
      total: 4096 * KB,
    });
    const shards = fakeShards();
    await refusal(list(new BudgetedRouter(shards.router, budget.lease()), 'a', 300));
    expect(shards.parked.bytes).toBe(0);
  });

  it("refuses a reply that fits alone but not beside the request's earlier ones", async () => {
    const budget = new ReplyBudget({
      perRequest: 256 * KB,
      perWorkspace: 2048 * KB,
      total: 4096 * KB,
    });
    const r = new BudgetedRouter(fakeShards().router, budget.lease());
    await list(r, 'a', 150);
    const err = await refusal(list(r, 'a', 150));
    expect(err.code).toBe('payload_too_large');
    expect(err.message).toMatch(/together over the limit of 262144 bytes per request/);
    await list(r, 'a', 50);
  });

  it('refuses a workspace over its bytes in flight with a retry, and serves other workspaces', async () => {
    const budget = new ReplyBudget({
      perRequest: 512 * KB,
      perWorkspace: 600 * KB,
      total: 4096 * KB,
    });
    const shards = fakeShards();
    const first = budget.lease();
    await list(new BudgetedRouter(shards.router, first), 'a', 400);
    const err = await refusal(list(new BudgetedRouter(shards.router, budget.lease()), 'a', 400));
    expect(err.code).toBe('rate_limited');
    expect(err.retryAfterS).toBe(1);
    expect(err.limit).toBe('FLASHBULB_MAX_REPLY_BYTES_PER_WORKSPACE');
    expect(err.message).toMatch(/workspace 'a' has \d+ bytes of replies in flight/);
    await list(new BudgetedRouter(shards.router, budget.lease()), 'b', 400);
    first.release();
    await list(new BudgetedRouter(shards.router, budget.lease()), 'a', 400);
  });

  it('holds the total in flight for all workspaces together', async () => {
    const budget = new ReplyBudget({
      perRequest: 512 * KB,
      perWorkspace: 1024 * KB,
      total: 700 * KB,
    });
    const shards = fakeShards();
    await list(new BudgetedRouter(shards.router, budget.lease()), 'a', 400);
    const err = await refusal(list(new BudgetedRouter(shards.router, budget.lease()), 'b', 400));
    expect(err.code).toBe('rate_limited');
    expect(err.limit).toBe('FLASHBULB_MAX_REPLY_BYTES_IN_FLIGHT');
  });

  it('lets no more concurrent large replies cross than the workspace may hold', async () => {
    const budget = new ReplyBudget({
      perRequest: 512 * KB,
      perWorkspace: 1024 * KB,
      total: 8192 * KB,
    });
    const shards = fakeShards();
    const outcomes = await Promise.all(
      Array.from({ length: 16 }, () =>
        list(new BudgetedRouter(shards.router, budget.lease()), 'a', 300).then(
          () => 'ok',
          (e: FlashbulbError) => e.code,
        ),
      ),
    );
    expect(outcomes.filter((o) => o === 'ok').length).toBeGreaterThanOrEqual(1);
    expect(outcomes.filter((o) => o !== 'ok').every((o) => o === 'rate_limited')).toBe(true);
    // What crossed never held more than the workspace's limit at once (nothing was released).
    expect(shards.crossed.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(1024 * KB);
  });

  it('does not count writes', async () => {
    const budget = new ReplyBudget({ perRequest: 64 * KB, perWorkspace: 64 * KB, total: 64 * KB });
    const shards = fakeShards();
    const r = new BudgetedRouter(shards.router, budget.lease());
    await r.call('a', 'remember', { limit: 100 } as unknown as ShardInput<'remember'>);
    expect(shards.asks).toEqual([undefined]);
    expect(budget.held()).toBe(0);
  });
});

describe('replies kept for their second ask', () => {
  const big = { text: 'x'.repeat(2 * KB) };

  it('hands a kept reply over once, and only for the method and workspace it was kept for', () => {
    const parked = new ParkedReplies();
    const offer = { below: 4 * KB, parked, key: parkKey('list', 'a') };
    const first = withinBudget(big, KB, offer);
    const token = parkedToken(first.value);
    expect(tooLargeBytes(first.value)).toBeGreaterThan(2 * KB);
    expect(token).toBeTypeOf('number');
    expect(parked.claim(parkKey('list', 'b'), token as number)).toBeUndefined();
    expect(parked.claim(parkKey('recall', 'a'), token as number)).toBeUndefined();
    expect(parked.claim(parkKey('list', 'a'), token as number)?.value).toBe(big);
    expect(parked.claim(parkKey('list', 'a'), token as number)).toBeUndefined();
    expect(parked.bytes).toBe(0);
  });

  it('keeps none over the offer, and none without one', () => {
    const parked = new ParkedReplies();
    const over = withinBudget(big, KB, { below: KB + 1, parked, key: parkKey('list', 'a') });
    expect(parkedToken(over.value)).toBeUndefined();
    expect(parkedToken(withinBudget(big, KB).value)).toBeUndefined();
    expect(parked.bytes).toBe(0);
  });

  it('drops a kept reply after its time, without a timer', () => {
    let now = 0;
    const parked = new ParkedReplies(() => now);
    const token = parked.park(parkKey('list', 'a'), big, 2 * KB) as number;
    now = PARKED_TTL_MS + 1;
    expect(parked.claim(parkKey('list', 'a'), token)).toBeUndefined();
    expect(parked.bytes).toBe(0);
  });

  it('bounds what it keeps', () => {
    const parked = new ParkedReplies();
    expect(parked.park('k', big, PARKED_MAX_BYTES + 1)).toBeUndefined();
    const half = PARKED_MAX_BYTES / 2;
    expect(parked.park('k', big, half)).toBeTypeOf('number');
    expect(parked.park('k', big, half)).toBeTypeOf('number');
    expect(parked.park('k', big, 1)).toBeUndefined();
  });

  it('re-measures a kept reply against the second ask', async () => {
    const parked = new ParkedReplies();
    const key = parkKey('list', 'a');
    const first = await answerWithin(
      parked,
      key,
      { maxReplyBytes: KB, parkBelow: 8 * KB },
      async () => big,
    );
    const claim = parkedToken(first.value) as number;
    let ran = 0;
    const again = await answerWithin(parked, key, { maxReplyBytes: 8 * KB, claim }, async () => {
      ran += 1;
      return null;
    });
    expect(again.value).toBe(big);
    expect(again.bytes).toBe(tooLargeBytes(first.value));
    expect(ran).toBe(0);
  });
});
