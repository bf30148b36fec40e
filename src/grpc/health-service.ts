/** @module grpc/health-service — hebbs.v1.HealthService.Check (no key needed). */
import type * as grpc from '@grpc/grpc-js';
import { readiness, type Services } from '../verbs/context.ts';
import { unary } from './call.ts';

export function healthService(svc: Services): grpc.UntypedServiceImplementation {
  return {
    Check: unary('health', async () => {
      const stats = await svc.shards.broadcast('stats', {}).catch(() => null);
      const serving = readiness(svc).ready && stats !== null;
      return {
        status: serving ? 'SERVING' : 'NOT_SERVING',
        version: svc.version,
        memory_count: stats ? stats.reduce((n, s) => n + s.memories, 0) : 0,
        uptime_seconds: Math.floor((Date.now() - svc.startedAt) / 1000),
      };
    }),
  };
}
