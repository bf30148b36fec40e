/**
 * @module embedding/probe-main — a child process that loads the model once and reports what it is
 * (`{ name, dim, maxBatch }` over IPC, or `{ error }`), then exits. The server checks its model at start this
 * way when the serving worker starts on demand: loading the model costs ~175 MB of native memory,
 * which an exited worker thread would leave in the server's allocator, and an exited process does not.
 */
import { createOnnxEmbedder } from './onnx-embedder.ts';

const [modelDir = ''] = process.argv.slice(2);
try {
  const m = await createOnnxEmbedder({ modelDir, threads: 1, spin: false });
  process.send?.({ name: m.name, dim: m.dim, maxBatch: m.maxBatch });
} catch (err) {
  process.send?.({ error: (err as Error).message });
}
process.disconnect?.();
