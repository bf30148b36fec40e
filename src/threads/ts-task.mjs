// Piscina task module for running a TypeScript task module from the sources through tsx (the
// .ts entry comes in workerData.__tsEntry). Used only when not running dist/.
import { workerData } from 'piscina';
import { register } from 'tsx/esm/api';

register();
const mod = await import(workerData.__tsEntry);
export default mod.default;
