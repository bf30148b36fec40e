/**
 * @module verbs/recall-rerank — the reranker stage of a recall, when the server runs one and the
 * request does not turn it off (`rerank: false`): the shard is asked for at least
 * FLASHBULB_RERANK_CANDIDATES similarity results, their texts go with the cue to the
 * cross-encoder's pool (off the router thread), and the answer is rebuilt from its scores
 * (recall/rerank); a late, busy or failed model leaves the unreranked order, said in the reply's
 * `rerank.outcome`, counted in `flashbulb_rerank_total` and logged once a minute at most.
 */
import type { Reranker } from '../embedding/reranker.ts';
import { invalid } from '../errors/codes.ts';
import { applyRerank, rerankCandidates, type RerankPlan } from '../recall/rerank.ts';
import type { RecallOutput } from '../recall/types.ts';
import type { Ctx } from './context.ts';

/** What the reranker did for one recall. */
export interface RerankReport {
  outcome: 'reranked' | 'timeout' | 'busy' | 'failed';
  /** Similarity results sent to it. */
  candidates: number;
}

const WARN_EVERY_MS = 60_000;
let lastWarning = 0;

/** The reranker this recall uses: the server's, unless `rerank` is false; true needs one. */
export function rerankerFor(ctx: Ctx, wanted: boolean | undefined): Reranker | null {
  const reranker = ctx.svc.reranker ?? null;
  if (wanted === true && reranker === null)
    throw invalid(
      'rerank: this server runs no reranker (FLASHBULB_RERANK_ENABLED is off); leave rerank out or false',
    );
  return wanted === false ? null : reranker;
}

export async function rerankHits(
  reranker: Reranker,
  cue: string,
  out: RecallOutput,
  plan: RerankPlan,
  wRelevance: number,
): Promise<RecallOutput & { rerank?: RerankReport }> {
  const candidates = rerankCandidates(out.results, plan);
  if (candidates.length === 0) return { ...out, results: applyRerank(out.results, plan, null, 1) };
  const r = await reranker.score(
    cue,
    candidates.map((h) => h.memory.content),
  );
  const rerank: RerankReport = { outcome: r.outcome, candidates: candidates.length };
  if (r.outcome !== 'reranked') {
    const now = Date.now();
    if (now - lastWarning >= WARN_EVERY_MS) {
      lastWarning = now;
      process.stderr.write(`flashbulb: recall answered unreranked: ${r.message}\n`);
    }
    return { ...out, results: applyRerank(out.results, plan, null, wRelevance), rerank };
  }
  return { ...out, results: applyRerank(out.results, plan, r.scores, wRelevance), rerank };
}
