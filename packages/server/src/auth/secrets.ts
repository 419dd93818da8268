/**
 * Token secrets and their salted hashes (docs/security.md, "Tokens, roles and ownership").
 *
 * A secret made by the server reads `tnr.<name>.<64 hex digits>`, so a node finds the token record
 * by name without trying every hash; any other bearer text (the operator's `TENURE_ROOT_TOKEN`) is
 * the `root` token's. The stored hash is scrypt (memory-hard, node:crypto) of the whole bearer
 * text with a random 16-byte salt; the secret itself is never stored, logged or replicated.
 */
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { ROOT_TOKEN_NAME } from '@tenure/coord-state';

/** scrypt cost: N = 2^14, r = 8 (16 MiB of memory per hash), 32-byte output. */
const SCRYPT: ScryptOptions = { N: 16_384, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };
const KEY_BYTES = 32;
const SALT_BYTES = 16;
const SECRET_PREFIX = 'tnr.';

/** A salted hash as stored in a token record (lowercase hex). */
export interface SaltedHash {
  readonly hash: string;
  readonly salt: string;
}

function scryptHex(secret: string, salt: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(secret, salt, KEY_BYTES, SCRYPT, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

/** Hashes `secret` with a new random salt (off the event loop: libuv's thread pool). */
export async function hashSecret(secret: string): Promise<SaltedHash> {
  const salt = randomBytes(SALT_BYTES);
  const key = await scryptHex(secret, salt);
  return { hash: key.toString('hex'), salt: salt.toString('hex') };
}

/** True when `secret` hashes to `stored` (constant-time comparison). */
export async function verifySecret(secret: string, stored: SaltedHash): Promise<boolean> {
  const key = await scryptHex(secret, Buffer.from(stored.salt, 'hex'));
  const want = Buffer.from(stored.hash, 'hex');
  return want.length === key.length && timingSafeEqual(want, key);
}

/** A new secret for token `name`: `tnr.<name>.<64 hex digits>` (256 random bits). */
export function newSecret(name: string): string {
  return `${SECRET_PREFIX}${name}.${randomBytes(32).toString('hex')}`;
}

/** The token name a bearer text claims: the `<name>` of `tnr.<name>.<hex>`, else `root`. */
export function tokenNameOf(bearer: string): string {
  if (!bearer.startsWith(SECRET_PREFIX)) return ROOT_TOKEN_NAME;
  const dot = bearer.lastIndexOf('.');
  return dot <= SECRET_PREFIX.length ? ROOT_TOKEN_NAME : bearer.slice(SECRET_PREFIX.length, dot);
}
