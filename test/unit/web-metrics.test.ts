/** The dashboard's reading of /v1/metrics: parsing, and rates and latencies between two samples. */
import { describe, expect, it } from 'vitest';
import { parseMetrics, requestStats, total } from '../../web/src/metrics.ts';

function exposition(recallCount: number, recallSum: number, fastBucket: number): string {
  return [
    '# HELP flashbulb_memories Memories stored',
    '# TYPE flashbulb_memories gauge',
    'flashbulb_memories 42',
    'flashbulb_background_backlog{shard="0",work="vector_index"} 3',
    'flashbulb_background_backlog{shard="1",work="vector_index"} 4',
    `flashbulb_request_duration_seconds_bucket{le="0.001",operation="recall",protocol="rest",outcome="ok"} ${fastBucket}`,
    `flashbulb_request_duration_seconds_bucket{le="0.01",operation="recall",protocol="rest",outcome="ok"} ${recallCount}`,
    `flashbulb_request_duration_seconds_bucket{le="+Inf",operation="recall",protocol="rest",outcome="ok"} ${recallCount}`,
    `flashbulb_request_duration_seconds_sum{operation="recall",protocol="rest",outcome="ok"} ${recallSum}`,
    `flashbulb_request_duration_seconds_count{operation="recall",protocol="rest",outcome="ok"} ${recallCount}`,
    'flashbulb_request_duration_seconds_count{operation="get",protocol="rest",outcome="ok"} 5',
    'flashbulb_request_duration_seconds_sum{operation="get",protocol="rest",outcome="ok"} 0.005',
    'weird_label{text="a \\"quoted\\" value"} 1',
  ].join('\n');
}

describe('dashboard metrics', () => {
  it('parses samples with labels, escapes and comments', () => {
    const s = parseMetrics(exposition(10, 0.02, 10));
    expect(total(s, 'flashbulb_memories')).toBe(42);
    expect(total(s, 'flashbulb_background_backlog', (l) => l['work'] === 'vector_index')).toBe(7);
    expect(s.find((x) => x.name === 'weird_label')?.labels['text']).toBe('a "quoted" value');
  });

  it('gives rates and latencies over the interval between two samples', () => {
    const before = parseMetrics(exposition(10, 0.02, 10));
    const after = parseMetrics(exposition(30, 0.12, 12));
    const recall = requestStats(before, after, 2).find((o) => o.op === 'recall');
    expect(recall).toMatchObject({ rate: 10, count: 30, sinceStart: false });
    expect(recall?.meanMs).toBeCloseTo(5, 6); // 0.1 s over 20 requests
    expect(recall?.p95Ms).toBe(10); // 2 of 20 under 1 ms: the 95th percentile is in the 10 ms bucket
    const get = requestStats(before, after, 2).find((o) => o.op === 'get');
    expect(get).toMatchObject({ rate: 0, sinceStart: true });
    expect(get?.meanMs).toBeCloseTo(1, 6);
  });

  it('reports no rate from a single sample', () => {
    const only = requestStats(null, parseMetrics(exposition(10, 0.02, 10)), 1);
    expect(only.every((o) => o.rate === 0 && o.sinceStart)).toBe(true);
    expect(only.find((o) => o.op === 'recall')?.p95Ms).toBe(1);
  });
});
