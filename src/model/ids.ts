/**
 * @module model/ids — 16-byte ULID memory ids: 48-bit millisecond time + 80 random bits,
 * monotonic within a millisecond. Lowercase hex on output; hex (any case) or ULID text on input.
 */
import { randomBytes } from 'node:crypto';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const HEX_RE = /^[0-9a-fA-F]{32}$/;
/** Crockford base32 (I, L and O read as 1, 1 and 0; U is not used). */
const ULID_RE = /^[0-7][0-9A-TV-Za-tv-z]{25}$/;
/** What `parseId` takes, as a JSON Schema pattern (either spelling). */
export const ID_PATTERN = `^(${HEX_RE.source.slice(1, -1)}|${ULID_RE.source.slice(1, -1)})$`;

/** Generates monotonic ULIDs as lowercase hex. One generator per owner (shard). */
export class IdGenerator {
  #last = new Uint8Array(16);

  /** Makes sure later ids sort after `hex` (used after recovery). */
  observe(hex: string): void {
    const bytes = Buffer.from(hex, 'hex');
    if (Buffer.compare(bytes, this.#last) > 0) this.#last = new Uint8Array(bytes);
  }

  next(nowMs: number = Date.now()): string {
    const id = new Uint8Array(16);
    writeTime(id, nowMs);
    if (
      Buffer.compare(Buffer.from(id.subarray(0, 6)), Buffer.from(this.#last.subarray(0, 6))) <= 0
    ) {
      id.set(this.#last);
      increment(id);
    } else {
      id.set(randomBytes(10), 6);
    }
    this.#last = id;
    return Buffer.from(id).toString('hex');
  }
}

function writeTime(id: Uint8Array, ms: number): void {
  let t = Math.max(0, Math.floor(ms));
  for (let i = 5; i >= 0; i--) {
    id[i] = t % 256;
    t = Math.floor(t / 256);
  }
}

function increment(id: Uint8Array): void {
  for (let i = 15; i >= 0; i--) {
    const v = (id[i] ?? 0) + 1;
    id[i] = v & 0xff;
    if (v <= 0xff) return;
  }
}

/** Parses a 32-hex or 26-char ULID id to lowercase hex, or returns null when malformed. */
export function parseId(text: string): string | null {
  if (HEX_RE.test(text)) return text.toLowerCase();
  if (ULID_RE.test(text)) return ulidTextToHex(text.toUpperCase());
  return null;
}

function ulidTextToHex(text: string): string {
  let value = 0n;
  for (const ch of text) value = (value << 5n) | BigInt(CROCKFORD.indexOf(normaliseCrockford(ch)));
  return value.toString(16).padStart(32, '0');
}

function normaliseCrockford(ch: string): string {
  if (ch === 'I' || ch === 'L') return '1';
  if (ch === 'O') return '0';
  return ch;
}

/** ULID text form of a hex id. */
export function hexToUlidText(hex: string): string {
  let value = BigInt(`0x${hex}`);
  let out = '';
  for (let i = 0; i < 26; i++) {
    out = CROCKFORD[Number(value & 31n)] + out;
    value >>= 5n;
  }
  return out;
}

/** Milliseconds encoded in an id's first 48 bits. */
export function idTimeMs(hex: string): number {
  return Number.parseInt(hex.slice(0, 12), 16);
}
