/** @module http/schemas — one schema per REST body (types only; value limits live in verbs/validate). */
import { Type as T } from '@sinclair/typebox';
import { EDGE_TYPES } from '../model/edge.ts';
import { MEMORY_KINDS } from '../model/memory.ts';

const Kind = T.Union(MEMORY_KINDS.map((k) => T.Literal(k)));
const Json = T.Record(T.String(), T.Unknown());
void EDGE_TYPES;

const EdgeSpec = T.Object({
  target_id: T.String(),
  edge_type: T.String(),
  confidence: T.Optional(T.Number()),
});

export const RememberBody = T.Object({
  content: T.String(),
  importance: T.Optional(T.Number()),
  context: T.Optional(T.Union([Json, T.Null()])),
  entity_id: T.Optional(T.Union([T.String(), T.Null()])),
  edges: T.Optional(T.Array(EdgeSpec)),
});

export const BatchBody = T.Object({ memory_ids: T.Array(T.String()) });

export const ReviseBody = T.Object({
  content: T.Optional(T.String()),
  importance: T.Optional(T.Number()),
  context: T.Optional(Json),
  context_mode: T.Optional(T.Union([T.Literal('merge'), T.Literal('replace')])),
  entity_id: T.Optional(T.Union([T.String(), T.Null()])),
  edges: T.Optional(T.Array(EdgeSpec)),
});

export const ForgetBody = T.Object({
  memory_ids: T.Optional(T.Array(T.String())),
  entity_id: T.Optional(T.String()),
  staleness_threshold_us: T.Optional(T.Number()),
  access_count_floor: T.Optional(T.Number()),
  memory_kind: T.Optional(Kind),
  decay_score_floor: T.Optional(T.Number()),
});

export const CreateWorkspaceBody = T.Object({
  slug: T.String(),
  name: T.Optional(T.String({ maxLength: 200 })),
});

export const CreateKeyBody = T.Object({
  workspace: T.String(),
  role: T.Union([T.Literal('admin'), T.Literal('workspace')]),
  label: T.Optional(T.String({ maxLength: 200 })),
});

export const ListQuery = T.Object({
  entity_id: T.Optional(T.String()),
  kind: T.Optional(Kind),
  cursor: T.Optional(T.String()),
  limit: T.Optional(T.Integer()),
  include_superseded: T.Optional(T.Boolean()),
});
