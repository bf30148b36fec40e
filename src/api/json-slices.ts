/**
 * @module api/json-slices — the JSON text of a large reply, built (and encoded as UTF-8) in slices of a
 * few milliseconds, so a 16 MB reply does not hold the router thread for the ~40 ms JSON.stringify
 * takes over it whole (issue 48). Every sliced job (this, and the listener writing the parts)
 * shares one lane (`nextSlice`) that runs one slice per turn of the event loop. The text comes as
 * parts, whole items or small pieces joined to about 64 KiB, for the transport to write one by
 * one. Containers are walked to depth 3 (a reply, its list, an item, the item's fields); what lies
 * deeper (a memory's context, a vector) is bounded by the input limits and stringified whole. The
 * text is JSON.stringify's, lone surrogates repaired (model/unicode `repairJsonText`); small
 * replies take JSON.stringify's own path.
 */
import { replyBytes } from '../model/json-size.ts';
import { repairJsonText, wellFormedJson } from '../model/unicode.ts';

/** How long one slice may run before it gives way. */
const SLICE_MS = 4;
/** Small pieces are joined into parts of about this many characters; a piece this long is a part of its own. */
const PART_CHARS = 64 * 1024;
const OWN_PART_CHARS = 4 * 1024;
/** Containers deeper than this are stringified whole. */
const WALK_DEPTH = 3;
/** A reply whose size hint is below this is stringified at once (well under a millisecond). */
export const SLICED_FROM_BYTES = 256 * 1024;

/**
 * The JSON text of `value` as parts. `sizeHint` (bytes: what the request's shard replies held, or
 * model/json-size's count) chooses between one JSON.stringify and the sliced walk.
 */
export async function jsonParts(
  value: unknown,
  sizeHint: number = replyBytes(value, SLICED_FROM_BYTES),
): Promise<Buffer[]> {
  if (sizeHint < SLICED_FROM_BYTES) return [Buffer.from(wellFormedJson(value))];
  // Each part is encoded here, in the slices: the transport then writes bytes and knows their length.
  const parts: Buffer[] = [];
  let part: string[] = [];
  let chars = 0;
  const cut = (): void => {
    if (part.length > 0) parts.push(Buffer.from(repairJsonText(part.join(''))));
    part = [];
    chars = 0;
  };
  let sliceStart = performance.now();
  for (const piece of pieces(value, 0)) {
    if (piece.length >= OWN_PART_CHARS) {
      // A large piece (a whole field of an item) is a part of its own: not copied into a joined one.
      cut();
      parts.push(Buffer.from(repairJsonText(piece)));
    } else {
      part.push(piece);
      chars += piece.length;
      if (chars < PART_CHARS) continue;
      cut();
    }
    if (performance.now() - sliceStart < SLICE_MS) continue;
    await nextSlice();
    sliceStart = performance.now();
  }
  cut();
  return parts;
}

/** Work waiting for its next slice, first come first served. */
const lane: Array<() => void> = [];
let laneScheduled = false;

/**
 * Resolves when the caller may run its next slice. All sliced work shares one lane that runs one
 * slice per turn of the event loop, so everything else (another tenant's request, a socket that
 * drained) is served between any two slices, however many large replies are being built: a
 * plain setImmediate per job would run every job's slice in the same turn.
 */
export function nextSlice(): Promise<void> {
  return new Promise((resolve) => {
    lane.push(resolve);
    if (!laneScheduled) scheduleLane();
  });
}

function scheduleLane(): void {
  laneScheduled = true;
  setImmediate(() => {
    laneScheduled = false;
    const next = lane.shift();
    if (lane.length > 0) scheduleLane();
    next?.();
  });
}

/** How long one slice of work may run before it takes its turn in the lane again. */
export const SLICE_BUDGET_MS = SLICE_MS;

/** What JSON.stringify drops from an object and writes as null in an array. */
function omitted(v: unknown): boolean {
  return v === undefined || typeof v === 'function' || typeof v === 'symbol';
}

/** JSON.stringify's text of `v` in pieces, each a whole token or a whole stringified value. */
function* pieces(input: unknown, depth: number): Generator<string> {
  const v = hasToJson(input) ? input.toJSON() : input;
  if (typeof v !== 'object' || v === null || depth >= WALK_DEPTH || ArrayBuffer.isView(v)) {
    yield JSON.stringify(v) ?? 'null';
    return;
  }
  if (Array.isArray(v)) {
    yield '[';
    for (let i = 0; i < v.length; i++) {
      if (i > 0) yield ',';
      if (omitted(v[i])) yield 'null';
      else yield* pieces(v[i], depth + 1);
    }
    yield ']';
    return;
  }
  yield '{';
  let first = true;
  for (const k of Object.keys(v)) {
    const child = (v as Record<string, unknown>)[k];
    if (omitted(child)) continue;
    yield `${first ? '' : ','}${JSON.stringify(k)}:`;
    first = false;
    yield* pieces(child, depth + 1);
  }
  yield '}';
}

function hasToJson(v: unknown): v is { toJSON(): unknown } {
  return (
    typeof v === 'object' && v !== null && typeof (v as { toJSON?: unknown }).toJSON === 'function'
  );
}
