/** @module verbs/insights — insight memories, most confident first. */
import type { MemoryView } from '../model/memory.ts';
import { charge, type Ctx } from './context.ts';
import { intInRange } from './recall-options.ts';
import { checkEntity, checkUnit } from './validate.ts';

export interface InsightsRequest {
  entity_id?: string | undefined;
  min_confidence?: number | undefined;
  max_results?: number | undefined;
  withEmbedding?: boolean;
}

export function insights(ctx: Ctx, req: InsightsRequest): Promise<MemoryView[]> {
  charge(ctx, 'read');
  return ctx.svc.shards.call(ctx.workspace, 'insights', {
    entityId:
      req.entity_id === undefined || req.entity_id === ''
        ? null
        : checkEntity('entity_id', req.entity_id),
    minConfidence:
      req.min_confidence === undefined ? 0 : checkUnit('min_confidence', req.min_confidence),
    maxResults: intInRange('max_results', req.max_results, 100, 1, 1000, { cap: true }),
    withEmbedding: req.withEmbedding ?? false,
  });
}
