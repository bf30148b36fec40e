/** loadConfig: defaults, parsing, and errors that name the variable at fault. */
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, DEFAULTS, loadConfig } from '../../src/config/index.ts';

describe('loadConfig', () => {
  it('applies the documented defaults to an empty environment', () => {
    const c = loadConfig({});
    expect(c.httpPort).toBe(6381);
    expect(c.grpcPort).toBe(6380);
    expect(c.bind).toBe('0.0.0.0');
    expect(c.dataDir).toBe(resolve('./snapshots'));
    expect(c.authEnabled).toBe(true);
    expect(c.publicHealth).toBe(false);
    expect(c.durability).toBe('fsync');
    expect(c.eraseWithinS).toBe(60);
    expect(c.embedder).toBe('model');
    expect(c.embedSpin).toBe(false);
    // Two workers where there are two cores; their intra-op threads share at most four.
    const cores = availableParallelism();
    expect(c.embedWorkers).toBe(Math.min(2, cores));
    expect(c.embedThreads).toBe(Math.max(1, Math.floor(Math.min(4, cores) / c.embedWorkers)));
    expect(c.shutdownTimeoutS).toBe(10);
    expect(c.shards).toBe(Number(DEFAULTS.FLASHBULB_SHARDS));
    expect(c.shards).toBeGreaterThanOrEqual(1);
  });

  it('an empty value means the default', () => {
    expect(loadConfig({ FLASHBULB_HTTP_PORT: '' }).httpPort).toBe(6381);
  });

  it('reads every kind of value', () => {
    const c = loadConfig({
      FLASHBULB_HTTP_PORT: '0',
      FLASHBULB_DATA_DIR: '/tmp/x/../y',
      FLASHBULB_AUTH_ENABLED: 'OFF',
      FLASHBULB_PUBLIC_HEALTH: 'yes',
      FLASHBULB_SHARDS: '3',
      FLASHBULB_DURABILITY: 'OS',
      FLASHBULB_ERASE_WITHIN_S: '2',
      FLASHBULB_EMBEDDER: 'hash',
      FLASHBULB_EMBED_SPIN: 'true',
    });
    expect(c).toMatchObject({
      httpPort: 0,
      dataDir: '/tmp/y',
      authEnabled: false,
      publicHealth: true,
      shards: 3,
      durability: 'os',
      eraseWithinS: 2,
      embedder: 'hash',
      embedSpin: true,
    });
  });

  it('returns a frozen object, with overrides applied', () => {
    const c = loadConfig({}, { shards: 9, eraseWithinS: 1 });
    expect(c.shards).toBe(9);
    expect(c.eraseWithinS).toBe(1);
    expect(Object.isFrozen(c)).toBe(true);
  });

  const bad: Array<[string, string]> = [
    ['FLASHBULB_HTTP_PORT', 'abc'],
    ['FLASHBULB_HTTP_PORT', '70000'],
    ['FLASHBULB_GRPC_PORT', '-1'],
    ['FLASHBULB_SHARDS', '0'],
    ['FLASHBULB_SHARDS', '1.5'],
    ['FLASHBULB_AUTH_ENABLED', 'maybe'],
    ['FLASHBULB_PUBLIC_HEALTH', '2'],
    ['FLASHBULB_DURABILITY', 'never'],
    ['FLASHBULB_SNAPSHOT_INTERVAL_S', '0'],
    ['FLASHBULB_SNAPSHOT_WAL_BYTES', '10'],
    ['FLASHBULB_ERASE_WITHIN_S', '0'],
    ['FLASHBULB_EMBEDDER', 'onnx'],
    ['FLASHBULB_RATE_LIMIT_WRITES', 'x'],
    ['FLASHBULB_MAX_INFLIGHT_PER_SHARD', '0'],
    ['FLASHBULB_SHARD_TIMEOUT_MS', '5'],
    ['FLASHBULB_REFLECT_ENABLED', 'maybe'],
    ['FLASHBULB_LLM_BASE_URL', 'ftp://x'],
    ['FLASHBULB_SHUTDOWN_TIMEOUT_S', '0'],
    ['FLASHBULB_SHARD_HEAP_MB', '16'],
    ['FLASHBULB_SHARD_HEAP_MB', '-1'],
  ];
  for (const [name, value] of bad) {
    it(`rejects ${name}=${value} with a ConfigError naming the variable and the value`, () => {
      expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
      expect(() => loadConfig({ [name]: value })).toThrow(name);
      expect(() => loadConfig({ [name]: value })).toThrow(`got '${value}'`);
    });
  }

  it("takes FLASHBULB_SHARD_HEAP_MB as 0 (V8's own limit) or a heap of at least 32 MB", () => {
    expect(loadConfig({}).shardHeapMb).toBe(0);
    expect(loadConfig({ FLASHBULB_SHARD_HEAP_MB: '32' }).shardHeapMb).toBe(32);
    expect(() => loadConfig({ FLASHBULB_SHARD_HEAP_MB: '31' })).toThrow(
      "FLASHBULB_SHARD_HEAP_MB must be 0 (V8's own limit) or at least 32 (MB), got '31'",
    );
  });

  it('documents a default for every variable it reads', () => {
    for (const name of Object.keys(DEFAULTS)) expect(name).toMatch(/^FLASHBULB_[A-Z_]+$/);
    expect(() => loadConfig({ ...DEFAULTS })).not.toThrow();
  });
});
