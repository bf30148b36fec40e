/** @module auth/keys — API key generation and hashing. Only the SHA-256 of a key is ever stored. */
import { createHash, randomBytes, randomInt } from 'node:crypto';

export type Role = 'admin' | 'workspace';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export function generateApiKey(role: Role): string {
  let body = '';
  for (let i = 0; i < 40; i++) body += BASE62[randomInt(62)];
  return `${role === 'admin' ? 'fb_admin_' : 'fb_live_'}${body}`;
}

export function generateKeyId(): string {
  return `key_${randomBytes(8).toString('hex')}`;
}

export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}
