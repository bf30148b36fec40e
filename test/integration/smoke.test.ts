import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';

describe('smoke', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.stop());

  it('stores and reads back a memory over REST, and keeps it across a restart', async () => {
    const created = await t.req('POST', '/v1/memories', {
      body: { content: 'hello world', entity_id: 'e1' },
    });
    expect(created.status).toBe(201);
    await t.restart();
    const got = await t.req('GET', `/v1/memories/${created.body.memory_id}`);
    expect(got.status).toBe(200);
    expect(got.body.content).toBe('hello world');
  });
});
