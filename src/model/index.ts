export * from './ids.ts';
export * from './memory.ts';
export * from './edge.ts';
