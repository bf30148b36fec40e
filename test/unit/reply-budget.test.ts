/**
 * Reply budgets (issue 48, item 1): what one request's reads may hold, what one workspace and the
 * process may have in flight, and that a reply over a budget never crosses from the shard. The
 * shards are a stand-in that answers each `list` with `size` bytes of text and honours
 * `maxReplyBytes` the way the shard worker does (protocol/reply-size `withinBudget`).
 */
import { describe, expect, it } from 'vitest';
import { FlashbulbError } from '../../src/errors/codes.ts';
import { replyBytes } from '../../src/model/json-size.ts';
import { tooLargeBytes, withinBudget } from '../../src/protocol/reply-size.ts';
import type { ShardInput, ShardMethod, ShardOutput } from '../../src/protocol/shard.ts';
import { BudgetedRouter, ReplyBudget } from '../../src/router/reply-budget.ts';
import type { CallOptions, ShardRouter } from '../../src/router/router.ts';

const KB = 1024;

/** Shards whose `list` answers `{ text }` of the size asked for in `input.limit` (KiB), and what crossed back. */
function fakeShards(): { router: ShardRouter; crossed: number[]; asks: Array<number | undefined> } {
  const crossed: number[] = [];
  const asks: Array<number | undefined> = [];
  const router: ShardRouter = {
    async call<M extends ShardMethod>(
      _ws: string,
      method: M,
      input: ShardInput<M>,
      _t?: ArrayBuffer[],
      opts: CallOptions = {},
    ): Promise<ShardOutput<M>> {
      if (method !== 'list' && method !== 'remember') throw new Error(`unexpected ${method}`);
      asks.push(opts.maxReplyBytes);
      const kib = (input as { limit: number }).limit;
      const { value, bytes } = withinBudget({ text: 'x'.repeat(kib * KB) }, opts.maxReplyBytes);
      if (tooLargeBytes(value) === null) crossed.push(replyBytes(value));
      if (bytes !== undefined) opts.replyBytes?.(bytes);
      await new Promise((resolve) => setImmediate(resolve));
      return value as ShardOutput<M>;
    },
    broadcast: async () => [],
    inflight: () => 0,
    problems: () => [],
    shutdown: async () => {},
  };
  return { router, crossed, asks };
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
