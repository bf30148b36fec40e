/** Edge type names: every accepted spelling, case-insensitively; unknown names are null. */
import { describe, expect, it } from 'vitest';
import { EDGE_TYPES, edgeTypeNumber, parseEdgeType } from '../../src/model/edge.ts';

function camel(snake: string): string {
  return snake
    .split('_')
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join('');
}

describe('parseEdgeType', () => {
  it('knows the nine edge types, numbered as in the proto', () => {
    expect(EDGE_TYPES).toEqual([
      'caused_by',
      'related_to',
      'followed_by',
      'revised_from',
      'insight_from',
      'contradicts',
      'has_entity',
      'entity_relation',
      'proposition_of',
    ]);
    expect(EDGE_TYPES.map(edgeTypeNumber)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  for (const type of EDGE_TYPES) {
    it(`accepts every spelling of ${type}`, () => {
      const upper = type.toUpperCase();
      const spellings = [
        type,
        camel(type),
        camel(type).charAt(0).toLowerCase() + camel(type).slice(1),
        upper,
        `EDGE_TYPE_${upper}`,
        `edge_type_${type}`,
        `EdgeType${camel(type)}`,
        type.replace(/^./, (c) => c.toUpperCase()),
        upper.toLowerCase().replace(/_(.)/g, (_, c: string) => `_${c.toUpperCase()}`),
      ];
      for (const s of spellings) expect(parseEdgeType(s), s).toBe(type);
    });
  }

  it('rejects unknown names', () => {
    for (const bad of [
      '',
      'unknown',
      'EDGE_TYPE_UNSPECIFIED',
      'EDGE_TYPE_',
      'edge_type',
      'caused',
      'caused by',
      'caused-by',
      'causes',
      'related_to_x',
      'X_RELATED_TO',
    ]) {
      expect(parseEdgeType(bad), JSON.stringify(bad)).toBeNull();
    }
  });
});
