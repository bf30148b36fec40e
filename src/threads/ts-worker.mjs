// Starts a TypeScript worker entry through tsx (used only when running from the sources: Node 20
// cannot start a worker from a .ts file by itself).
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
await import(workerData.__tsEntry);
