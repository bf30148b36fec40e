/**
 * @module shard/ops/upload — stores uploaded files as a document memory plus proposition
 * memories. Re-uploading a path replaces what changed: an unchanged file is left alone; a changed
 * one keeps its document id (content, hash and vector replaced), keeps propositions whose text is
 * still there, drops the others and adds the new ones. Edges: proposition —proposition_of→
 * document; proposition —has_entity→ the document of an entity it names; proposition
 * —entity_relation→ (up to 3) propositions of that entity's own document.
 */
import { mentions } from '../../ingest/document.ts';
import type { Edge, EdgeType } from '../../model/edge.ts';
import type { MemoryRecord } from '../../model/memory.ts';
import type { LiveRecord } from '../store/records.ts';
import type { UploadFile, UploadFileResult } from '../../protocol/shard.ts';
import type { Workspace } from '../store/workspace.ts';
import { newMemory, type OpContext } from './context.ts';

const RELATED_PER_ENTITY = 3;

export async function upload(
  ctx: OpContext,
  ws: string,
  input: { files: UploadFile[]; ttlUs?: number },
): Promise<UploadFileResult[]> {
  const w = ctx.state.workspace(ws);
  const now = ctx.nowUs();
  const expiresAt = input.ttlUs === undefined ? null : now + input.ttlUs;
  const records: LiveRecord[] = [];
  const results: UploadFileResult[] = [];
  const newProps: MemoryRecord[] = [];
  for (const file of input.files) {
    const r = uploadFile(ctx, w, file, { now, expiresAt }, records, newProps);
    results.push(r);
  }
  linkEntities(w, ws, newProps, now, records);
  await ctx.commit(records);
  return results;
}

/** `expiresAt`: for the memories this creates (an updated document keeps its own). */
function uploadFile(
  ctx: OpContext,
  w: Workspace,
  file: UploadFile,
  at: { now: number; expiresAt: number | null },
  records: LiveRecord[],
  newProps: MemoryRecord[],
): UploadFileResult {
  const ws = w.slug;
  const { now, expiresAt } = at;
  const existing = findDocument(w, file.filePath);
  if (existing && existing.context['content_hash'] === file.contentHash) {
    return {
      file_path: file.filePath,
      document_id: existing.id,
      propositions: propositionsOf(w, existing.id).length,
      status: 'unchanged',
    };
  }
  const doc: MemoryRecord = existing
    ? {
        ...existing,
        content: file.content,
        context: { ...existing.context, content_hash: file.contentHash },
        entityId: file.entityId,
        embedding: file.embedding,
        updatedAt: now,
        logicalClock: existing.logicalClock + 1,
      }
    : newMemory(ctx, now, {
        importance: 0.5,
        content: file.content,
        kind: 'document',
        entityId: file.entityId,
        embedding: file.embedding,
        context: { file_path: file.filePath, content_hash: file.contentHash },
        expiresAt,
      });
  records.push({ t: 'put', ws, m: doc });
  const old = existing ? propositionsOf(w, existing.id) : [];
  const keep = new Map(old.map((p) => [p.content, p]));
  const wanted = new Set(file.propositions.map((p) => p.text));
  for (const p of old) if (!wanted.has(p.content)) records.push({ t: 'del', ws, id: p.id });
  let count = 0;
  for (const p of file.propositions) {
    count += 1;
    const kept = keep.get(p.text);
    if (kept) {
      // A statement that stays follows its file to a new entity.
      if (kept.entityId !== file.entityId)
        records.push({ t: 'put', ws, m: { ...kept, entityId: file.entityId, updatedAt: now } });
      continue;
    }
    const prop = newMemory(ctx, now, {
      importance: 0.5,
      content: p.text,
      kind: 'proposition',
      entityId: file.entityId,
      embedding: p.embedding,
      context: { file_path: file.filePath },
      expiresAt,
    });
    records.push({ t: 'put', ws, m: prop });
    records.push(edge(ws, prop.id, doc.id, 'proposition_of', now));
    newProps.push(prop);
  }
  return {
    file_path: file.filePath,
    document_id: doc.id,
    propositions: count,
    status: existing ? 'updated' : 'created',
  };
}

function linkEntities(
  w: Workspace,
  ws: string,
  props: MemoryRecord[],
  now: number,
  records: LiveRecord[],
): void {
  const docs = new Map<string, string>();
  const entityProps = new Map<string, string[]>();
  for (const r of records) {
    if (r.t !== 'put' || r.m.entityId === null) continue;
    if (r.m.kind === 'document') docs.set(r.m.entityId, r.m.id);
    if (r.m.kind === 'proposition')
      entityProps.set(r.m.entityId, [...(entityProps.get(r.m.entityId) ?? []), r.m.id]);
  }
  for (const [entity, ids] of w.byEntity) {
    for (const id of ids.after(null)) {
      const m = w.memories.get(id);
      if (m?.kind === 'document' && !docs.has(entity)) docs.set(entity, id);
      if (
        m?.kind === 'proposition' &&
        (entityProps.get(entity)?.length ?? 0) < RELATED_PER_ENTITY
      ) {
        entityProps.set(entity, [...(entityProps.get(entity) ?? []), id]);
      }
    }
  }
  for (const p of props) {
    for (const [entity, docId] of docs) {
      if (entity === p.entityId || !mentions(p.content, entity)) continue;
      records.push(edge(ws, p.id, docId, 'has_entity', now));
      for (const other of (entityProps.get(entity) ?? []).slice(0, RELATED_PER_ENTITY)) {
        if (other !== p.id) records.push(edge(ws, p.id, other, 'entity_relation', now));
      }
    }
  }
}

function findDocument(w: Workspace, filePath: string): MemoryRecord | undefined {
  for (const m of w.memories.values()) {
    if (m.kind === 'document' && m.supersededBy === null && m.context['file_path'] === filePath)
      return m;
  }
  return undefined;
}

function propositionsOf(w: Workspace, docId: string): MemoryRecord[] {
  return w.graph
    .incoming(docId)
    .filter((e) => e.edge_type === 'proposition_of')
    .flatMap((e) => w.memories.get(e.source_id) ?? []);
}

function edge(ws: string, source: string, target: string, type: EdgeType, now: number): LiveRecord {
  const e: Edge = {
    source_id: source,
    target_id: target,
    edge_type: type,
    confidence: 1,
    timestamp_us: now,
  };
  return { t: 'edge', ws, e };
}
