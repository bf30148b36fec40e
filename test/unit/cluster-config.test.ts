/**
 * Cluster mode is opt-in (src/config): off unless FLASHBULB_NATS_URL is set, and then it needs a
 * node id; bad values are refused with the variable and the value named.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/index.ts';

describe('cluster configuration', () => {
  it('is off by default: no NATS URLs, the single-process defaults untouched', () => {
    const c = loadConfig({});
    expect(c.natsUrls).toEqual([]);
    expect(c.nodeId).toBe('');
    expect(c.clusterPartitions).toBe(64);
    expect(c.natsReplicas).toBe(1);
  });

  it('reads comma-separated nats:// URLs and the node id', () => {
    const c = loadConfig({
      FLASHBULB_NATS_URL: 'nats://n1:4222, nats://n2:4222,tls://n3:4222',
      FLASHBULB_NODE_ID: 'node-1',
      FLASHBULB_CLUSTER_PARTITIONS: '16',
      FLASHBULB_NATS_REPLICAS: '3',
      FLASHBULB_CLUSTER_LEASE_MS: '4000',
      FLASHBULB_CLUSTER_NAME: 'prod_eu',
    });
    expect(c.natsUrls).toEqual(['nats://n1:4222', 'nats://n2:4222', 'tls://n3:4222']);
    expect(c).toMatchObject({
      nodeId: 'node-1',
      clusterPartitions: 16,
      natsReplicas: 3,
      clusterLeaseMs: 4000,
      clusterName: 'prod_eu',
    });
  });

  it('needs a node id when a NATS URL is set', () => {
    expect(() => loadConfig({ FLASHBULB_NATS_URL: 'nats://n1:4222' })).toThrow(ConfigError);
    expect(() => loadConfig({ FLASHBULB_NATS_URL: 'nats://n1:4222' })).toThrow(
      'FLASHBULB_NODE_ID is required',
    );
  });

  const bad: Array<[string, string]> = [
    ['FLASHBULB_NATS_URL', 'http://n1:4222'],
    ['FLASHBULB_NATS_URL', 'not a url'],
    ['FLASHBULB_NODE_ID', 'has space'],
    ['FLASHBULB_NODE_ID', 'dots.split.subjects'],
    ['FLASHBULB_CLUSTER_NAME', 'a*b'],
    ['FLASHBULB_CLUSTER_PARTITIONS', '0'],
    ['FLASHBULB_NATS_REPLICAS', '6'],
    ['FLASHBULB_CLUSTER_LEASE_MS', '10'],
  ];
  for (const [name, value] of bad) {
    it(`rejects ${name}=${value} naming the variable and the value`, () => {
      const env = { FLASHBULB_NODE_ID: 'n1', [name]: value };
      expect(() => loadConfig(env)).toThrow(ConfigError);
      expect(() => loadConfig(env)).toThrow(name);
      expect(() => loadConfig(env)).toThrow(value.trim());
    });
  }
});
