import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { BatchPoster, unbatch, type PostTarget } from '../../src/protocol/batch-post.ts';

class Recorder implements PostTarget {
  readonly posts: Array<{ value: unknown; transfer: readonly ArrayBuffer[] }> = [];
  postMessage(value: unknown, transfer: readonly ArrayBuffer[] = []): void {
    // What structured cloning would refuse: a function anywhere in the message.
    if (
      JSON.stringify(value, (_k, v: unknown) => (typeof v === 'function' ? 'FN' : v)).includes(
        '"FN"',
      )
    )
      throw new Error('could not be cloned');
    this.posts.push({ value, transfer });
  }
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('BatchPoster', () => {
  it('sends everything posted in one turn as one message, and a lone message as itself', async () => {
    const target = new Recorder();
    const poster = new BatchPoster<{ n: number }>(target);
    const a = new ArrayBuffer(8);
    poster.post({ n: 1 }, [a], () => undefined);
    poster.post({ n: 2 }, [], () => undefined);
    poster.post({ n: 3 }, [], () => undefined);
    expect(target.posts).toHaveLength(0);
    await turn();
    expect(target.posts).toEqual([{ value: [{ n: 1 }, { n: 2 }, { n: 3 }], transfer: [a] }]);
    poster.post({ n: 4 }, [], () => undefined);
    await turn();
    expect(target.posts[1]).toEqual({ value: { n: 4 }, transfer: [] });
    expect(unbatch(target.posts[0]?.value)).toHaveLength(3);
    expect(unbatch(target.posts[1]?.value)).toEqual([{ n: 4 }]);
  });

  it('fails only the message that cannot be cloned; the others still go', async () => {
    const target = new Recorder();
    const poster = new BatchPoster<unknown>(target);
    const failed: string[] = [];
    poster.post({ n: 1 }, [], () => failed.push('1'));
    poster.post({ n: 2, f: () => 0 }, [], (e) => failed.push(`2: ${e.message}`));
    poster.post({ n: 3 }, [], () => failed.push('3'));
    await turn();
    expect(failed).toEqual(['2: could not be cloned']);
    expect(target.posts.map((p) => p.value)).toEqual([{ n: 1 }, { n: 3 }]);
  });

  it('flush sends at once, and messages keep their order through a real port', async () => {
    const { port1, port2 } = new MessageChannel();
    const got: number[] = [];
    const all = new Promise<void>((resolve) => {
      port2.on('message', (data: number | number[]) => {
        got.push(...unbatch(data));
        if (got.length === 5) resolve();
      });
    });
    const poster = new BatchPoster<number>(port1 as MessagePort);
    poster.post(1, [], () => undefined);
    poster.post(2, [], () => undefined);
    poster.flush();
    port1.postMessage(3);
    poster.post(4, [], () => undefined);
    poster.post(5, [], () => undefined);
    await all;
    expect(got).toEqual([1, 2, 3, 4, 5]);
    port1.close();
  });
});
