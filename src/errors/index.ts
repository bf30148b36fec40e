export * from './codes.ts';
export * from './wire.ts';
