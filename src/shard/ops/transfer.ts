/**
 * @module shard/ops/transfer — pages of a workspace for export and the in-shard half of import.
 * A page is a run of live memories in id (= creation) order, each with its superseded versions
 * and the edges placed on its line. Every edge is placed once, on the line of whichever end comes
 * later (a version counts as its live memory), so a file replays in one pass: when a line is
 * imported, the other end of each of its edges is already there.
 */
import type { Edge } from '../../model/edge.ts';
import { isExpired, type MemoryRecord } from '../../model/memory.ts';
import type { LiveRecord } from '../store/records.ts';
import type {
  ExportLine,
  ExportPageInput,
  ImportItem,
  ImportOutcome,
} from '../../protocol/shard.ts';
import type { Workspace } from '../store/workspace.ts';
import { view, type OpContext } from './context.ts';

export function exportPage(
  ctx: OpContext,
  ws: string,
  input: ExportPageInput,
): { lines: ExportLine[]; nextCursor: string | null } {
  const w = ctx.state.workspaces.get(ws);
  if (!w) return { lines: [], nextCursor: null };
  const lines: ExportLine[] = [];
  for (const id of w.order.after(input.cursor)) {
    const m = w.memories.get(id);
    if (!m || m.supersededBy !== null) continue;
    if (lines.length === input.limit)
      return { lines, nextCursor: lines[lines.length - 1]?.memory.id ?? null };
    lines.push(lineOf(w, m, input.withEmbedding));
  }
  return { lines, nextCursor: null };
}

function lineOf(w: Workspace, m: MemoryRecord, withEmbedding: boolean): ExportLine {
  const versions = [...(w.versions.get(m.id) ?? [])].sort().flatMap((vid) => {
    const v = w.memories.get(vid);
    return v ? [v] : [];
  });
  const key = (id: string): string => w.memories.get(id)?.supersededBy ?? id;
  const edges: Edge[] = [];
  for (const member of [m, ...versions]) {
    for (const e of w.graph.outgoing(member.id)) if (key(e.target_id) <= m.id) edges.push(e);
    for (const e of w.graph.incoming(member.id)) if (key(e.source_id) < m.id) edges.push(e);
  }
  return {
    memory: view(m, withEmbedding),
    versions: versions.map((v) => view(v, withEmbedding)),
    edges,
  };
}

/**
 * Imports items in order; each is applied whole or not at all. An item whose memory exists is
 * skipped, but its edges are added where missing (so an import cut short can be run again).
 */
export async function importItems(
  ctx: OpContext,
  ws: string,
  input: { items: ImportItem[] },
): Promise<ImportOutcome[]> {
  const w = ctx.state.workspace(ws);
  const now = ctx.nowUs();
  const outcomes: ImportOutcome[] = [];
  const durable: Array<Promise<void>> = [];
  for (const item of input.items) {
    const { result, records } = planItem(w, item, now);
    outcomes.push(result);
    // commit applies the records at once (the next item's checks see them); the log appends
    // share syncs. Imported memories were checked where they came from: no after-write work.
    if (records.length > 0) durable.push(ctx.commit(records, { quiet: true }));
  }
  await Promise.all(durable);
  return outcomes;
}

function planItem(
  w: Workspace,
  item: ImportItem,
  now: number,
): { result: ImportOutcome; records: LiveRecord[] } {
  const ws = w.slug;
  const exists = w.memories.get(item.memory.id);
  const members = [item.memory, ...item.versions];
  const inItem = new Set(members.map((m) => m.id));
  for (const e of item.edges) {
    for (const end of [e.source_id, e.target_id]) {
      if (!inItem.has(end) && !w.memories.has(end)) {
        return {
          result: {
            status: 'error',
            message: `edge ${e.edge_type} ${e.source_id} → ${e.target_id}: memory ${end} is neither on this line nor already in the workspace`,
          },
          records: [],
        };
      }
    }
  }
  if (exists) {
    if (exists.supersededBy !== null)
      return {
        result: {
          status: 'error',
          message: `memory_id ${item.memory.id} is a superseded version in this workspace`,
        },
        records: [],
      };
    const missing = item.edges.filter(
      (e) => w.memories.has(e.source_id) && w.memories.has(e.target_id) && !hasEdge(w, e),
    );
    return { result: { status: 'skipped' }, records: missing.map((e) => ({ t: 'edge', ws, e })) };
  }
  const taken = item.versions.find((v) => w.memories.has(v.id));
  if (taken)
    return {
      result: { status: 'error', message: `version ${taken.id} already exists in this workspace` },
      records: [],
    };
  const { conversationId, messageId } = item.memory;
  const holder =
    conversationId === null || messageId === null
      ? undefined
      : w.conversations.get(conversationId)?.messages.get(messageId);
  if (holder !== undefined)
    return {
      result: {
        status: 'error',
        message: `message_id ${messageId} of conversation ${conversationId} is already memory ${holder}`,
      },
      records: [],
    };
  if (isExpired(item.memory, now)) return { result: { status: 'expired' }, records: [] };
  const records: LiveRecord[] = members.map((m) => ({ t: 'put', ws, m }));
  for (const e of item.edges) records.push({ t: 'edge', ws, e });
  return { result: { status: 'imported' }, records };
}

function hasEdge(w: Workspace, e: Edge): boolean {
  return w.graph
    .outgoing(e.source_id)
    .some((x) => x.target_id === e.target_id && x.edge_type === e.edge_type);
}
