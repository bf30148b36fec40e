/** @module graph/styles — colour and line style per edge type and per memory kind, shared by the graph and its legend. */
import type { Edge, Memory } from '../../../clients/typescript/src/index.ts';

export const EDGE_STYLES: Readonly<Record<Edge['edge_type'], { color: string; dash: string }>> = {
  caused_by: { color: '#d9480f', dash: '' },
  related_to: { color: '#868e96', dash: '2 4' },
  followed_by: { color: '#1c7ed6', dash: '' },
  revised_from: { color: '#7048e8', dash: '6 4' },
  insight_from: { color: '#2b8a3e', dash: '6 4' },
  contradicts: { color: '#e03131', dash: '' },
  has_entity: { color: '#0c8599', dash: '2 4' },
  entity_relation: { color: '#ae3ec9', dash: '2 4' },
  proposition_of: { color: '#f08c00', dash: '6 4' },
};

export const EDGE_TYPES = Object.keys(EDGE_STYLES) as Array<Edge['edge_type']>;

export const KIND_COLORS: Readonly<Record<Memory['kind'], string>> = {
  episode: '#4dabf7',
  insight: '#51cf66',
  revision: '#b197fc',
  document: '#ffa94d',
  proposition: '#ffd43b',
};
