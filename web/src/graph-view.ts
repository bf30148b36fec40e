/**
 * @module graph-view — draws a neighbourhood with Cytoscape.js (loaded on demand: it is most of
 * the bundle). Each edge type has its own colour and line style; the centre is ringed.
 */
import type { Core, ElementDefinition, StylesheetJson } from 'cytoscape';
import type { Edge, Memory } from '../../clients/typescript/src/index.ts';

/** Colour and line style per edge type, shared with the legend. */
export const EDGE_STYLES: Readonly<Record<Edge['edge_type'], { color: string; line: 'solid' | 'dashed' | 'dotted' }>> = {
  caused_by: { color: '#d9480f', line: 'solid' },
  related_to: { color: '#868e96', line: 'dotted' },
  followed_by: { color: '#1c7ed6', line: 'solid' },
  revised_from: { color: '#7048e8', line: 'dashed' },
  insight_from: { color: '#2b8a3e', line: 'dashed' },
  contradicts: { color: '#e03131', line: 'solid' },
  has_entity: { color: '#0c8599', line: 'dotted' },
  entity_relation: { color: '#ae3ec9', line: 'dotted' },
  proposition_of: { color: '#f08c00', line: 'dashed' },
};

const KIND_COLORS: Readonly<Record<Memory['kind'], string>> = {
  episode: '#4dabf7',
  insight: '#69db7c',
  revision: '#b197fc',
  document: '#ffa94d',
  proposition: '#ffd43b',
};

export interface GraphData {
  center: string;
  nodes: Memory[];
  edges: Edge[];
  dark: boolean;
}

export async function drawGraph(container: HTMLElement, data: GraphData, onPick: (id: string) => void): Promise<Core> {
  const { default: cytoscape } = await import('cytoscape');
  const elements: ElementDefinition[] = [
    ...data.nodes.map((m) => ({ data: { id: m.memory_id, label: label(m.content), kind: m.kind }, classes: m.memory_id === data.center ? 'center' : '' })),
    ...data.edges.map((e) => ({ data: { id: `${e.source_id}>${e.target_id}:${e.edge_type}`, source: e.source_id, target: e.target_id, type: e.edge_type } })),
  ];
  const cy = cytoscape({
    container,
    elements,
    style: stylesheet(data.dark),
    // Force-directed, with room for the labels; the centre is pinned in the middle.
    layout: { name: 'cose', animate: false, randomize: true, nodeRepulsion: () => 400_000, idealEdgeLength: () => 120, nodeOverlap: 20, padding: 40 },
    wheelSensitivity: 0.3,
    minZoom: 0.2,
    maxZoom: 1.6,
  });
  cy.on('tap', 'node', (evt) => onPick(String(evt.target.id())));
  return cy;
}

/** Redraws with the colours of the other theme. */
export function restyle(cy: Core, dark: boolean): void {
  cy.style(stylesheet(dark));
}

function label(content: string): string {
  return content.length > 40 ? `${content.slice(0, 39)}…` : content;
}

function stylesheet(dark: boolean): StylesheetJson {
  const text = dark ? '#e9ecef' : '#212529';
  return [
    {
      selector: 'node',
      style: {
        label: 'data(label)', 'font-size': 10, color: text, 'text-wrap': 'wrap', 'text-max-width': '120px', 'text-valign': 'bottom', 'text-margin-y': 4,
        width: 22, height: 22, 'border-width': 1, 'border-color': dark ? '#adb5bd' : '#495057',
        'background-color': (ele: { data: (k: string) => unknown }) => KIND_COLORS[ele.data('kind') as Memory['kind']] ?? '#ced4da',
      },
    },
    { selector: 'node.center', style: { width: 34, height: 34, 'border-width': 4, 'border-color': '#f5b400', 'font-weight': 'bold' } },
    {
      selector: 'edge',
      style: {
        width: 2, 'curve-style': 'bezier', 'target-arrow-shape': 'triangle', 'arrow-scale': 0.9,
        label: 'data(type)', 'font-size': 8, color: dark ? '#adb5bd' : '#5c636a', 'text-rotation': 'autorotate', 'text-margin-y': -8,
        'line-color': (ele: { data: (k: string) => unknown }) => EDGE_STYLES[ele.data('type') as Edge['edge_type']]?.color ?? '#999',
        'target-arrow-color': (ele: { data: (k: string) => unknown }) => EDGE_STYLES[ele.data('type') as Edge['edge_type']]?.color ?? '#999',
        'line-style': (ele: { data: (k: string) => unknown }) => EDGE_STYLES[ele.data('type') as Edge['edge_type']]?.line ?? 'solid',
      },
    },
  ] as StylesheetJson;
}
