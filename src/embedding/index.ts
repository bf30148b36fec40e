/** @module embedding — picks the embedder the configuration asks for. */
import type { Config } from '../config/index.ts';
import { tracer } from '../tracing/index.ts';
import type { Embedder } from './embedder.ts';
import { createHashEmbedder } from './hash-embedder.ts';

export type { Embedder } from './embedder.ts';

export async function createEmbedder(config: Config): Promise<Embedder> {
  if (config.embedder === 'hash') return traced(createHashEmbedder());
  const { createModelEmbedder } = await import('./model-embedder.ts');
  return traced(await createModelEmbedder(config));
}

/** With tracing on, each embedding call is a span (the texts' count, never the texts). */
function traced(inner: Embedder): Embedder {
  return {
    name: inner.name,
    dim: inner.dim,
    embed: (texts) =>
      tracer().enabled
        ? tracer().span('embed', () => inner.embed(texts), {
            attributes: { 'flashbulb.texts': texts.length },
          })
        : inner.embed(texts),
    close: () => inner.close(),
  };
}
