/**
 * @module config/rerank — the shape of the reranker's settings (FLASHBULB_RERANK_*), which
 * config/index.ts reads and checks with the rest; the stage is off by default and needs a model
 * directory the user supplies (docs/concepts/reranking.md).
 */

export interface RerankConfig {
  readonly enabled: boolean;
  /** A cross-encoder in the Hugging Face layout (tokenizer.json, config.json, onnx/model.onnx or model.onnx). */
  readonly modelDir: string;
  /** Similarity's best this many are rescored; a recall asks the shard for at least this many. */
  readonly candidates: number;
  /** Worker threads running the model, ONNX Runtime intra-op threads each, pairs per model run. */
  readonly workers: number;
  readonly threads: number;
  readonly batch: number;
  /** Tokens of a (cue, memory) pair; the memory's text is cut to fit. */
  readonly maxTokens: number;
  /** Recalls waiting for the model; past it, a recall answers unreranked at once. */
  readonly maxQueued: number;
  /** Past this, a recall answers in the unreranked order (the model's scores come too late). */
  readonly timeoutMs: number;
}
