/**
 * @module verbs/recall-rerank — the reranker stage of a recall, when the server runs one and the
 * request does not turn it off (`rerank: false`): the shard is asked for at least
 * FLASHBULB_RERANK_CANDIDATES similarity results, their texts go with the cue to the
 * cross-encoder's pool (off the router thread), and the answer is rebuilt from its scores
 * (recall/rerank); a late, busy or failed model leaves the unreranked order, said in the reply's
 * `rerank.outcome`, counted in `flashbulb_rerank_total` and logged once a minute at most. The
 * access of the answer's first result is counted here, after the reordering, not by the shard.
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

/**
 * Counts the access of the answer's first result, which the shard left to the router since the
 * reranker may reorder: the memory the recall answers with is the one reinforced, as without the
 * stage. A shard that cannot take it loses one access, not the recall.
 */
export async function countAccess(ctx: Ctx, out: RecallOutput): Promise<void> {
  const first = out.results[0];
  if (first === undefined) return;
  try {
    await ctx.svc.shards.call(ctx.workspace, 'access', { ids: [first.memory.id] });
  } catch {
    /* the recall is answered either way */
  }
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
