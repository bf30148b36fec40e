/** @module grpc/reflect-service — hebbs.v1.ReflectService over the verbs. */
import type * as grpc from '@grpc/grpc-js';
import { FlashbulbError } from '../errors/codes.ts';
import type { Services } from '../verbs/context.ts';
import { insights } from '../verbs/insights.ts';
import { memoryToProto } from './codec.ts';
import type { GetInsightsRequestMsg } from './messages.ts';
import { ctxOf, unary } from './call.ts';

function notYet(name: string): () => never {
  return () => {
    throw new FlashbulbError('method_not_allowed', `${name} is not available in this version of Flashbulb yet`);
  };
}

export function reflectService(svc: Services): grpc.UntypedServiceImplementation {
  return {
    GetInsights: unary('insights', async (req: GetInsightsRequestMsg, md) => {
      const found = await insights(ctxOf(svc, md, req.tenant_id), {
        entity_id: req.entity_id,
        min_confidence: req.min_confidence,
        max_results: req.max_results === 0 ? undefined : req.max_results,
      });
      return { insights: found.map((m) => memoryToProto(m, { sources: true })) };
    }),
    Reflect: unary('reflect', notYet('Reflect')),
    ReflectPrepare: unary('reflect_prepare', notYet('ReflectPrepare')),
    ReflectCommit: unary('reflect_commit', notYet('ReflectCommit')),
    ContradictionPrepare: unary('contradiction_prepare', notYet('ContradictionPrepare')),
    ContradictionCommit: unary('contradiction_commit', notYet('ContradictionCommit')),
  };
}
