/**
 * Checks `Authorization: Bearer <token>` against the node's applied state (docs/security.md). The
 * check runs where the request is served, so a revocation takes effect on a node as soon as that
 * node applies the revoking entry. Verified bearers are cached (keyed by their SHA-256, never the
 * text) together with the hash they matched: an entry counts only while the token record still
 * has that very hash, so revoking (or re-creating) a token invalidates it at once.
 */
import { createHash } from 'node:crypto';
import type { TokenRecord } from '@tenure/coord-state';
import { HttpError } from '../http-error.js';
import { tokenNameOf, verifySecret } from './secrets.js';

/** Verified bearers remembered at most (the cache is emptied when full). */
export const VERIFIED_CACHE_MAX = 10_000;
/** Longest bearer text looked at; longer ones are refused without hashing. */
export const BEARER_CHARS_MAX = 512;

/** Reads a token record of the local applied state by name. */
export type TokenReader = (name: string) => TokenRecord | null;

/** 401 unauthorized with a message saying what is wrong (never echoing the secret). */
export function unauthorized(message: string): HttpError {
  return new HttpError('unauthorized', message, {}, { 'www-authenticate': 'Bearer' });
}

export class Authenticator {
  readonly #read: TokenReader;
  /** sha256(bearer) → the token name and the hash it was verified against. */
  readonly #verified = new Map<string, { readonly name: string; readonly hash: string }>();

  constructor(read: TokenReader) {
    this.#read = read;
  }

  /**
   * The token record of `authorization` (`Bearer <token>`). Throws 401 `unauthorized` when the
   * header is missing or malformed, or the token is unknown, revoked or wrong.
   */
  async authenticate(authorization: string | undefined): Promise<TokenRecord> {
    if (authorization === undefined) throw unauthorized('missing Authorization: Bearer <token>');
    const m = /^Bearer +(\S+)$/i.exec(authorization);
    if (m === null || m[1]!.length > BEARER_CHARS_MAX)
      throw unauthorized('the Authorization header must be Bearer <token>');
    const bearer = m[1]!;
    const name = tokenNameOf(bearer);
    const rec = this.#read(name);
    if (rec === null) throw unauthorized('unknown or revoked token');
    const key = createHash('sha256').update(bearer).digest('hex');
    const hit = this.#verified.get(key);
    if (hit !== undefined && hit.name === name && hit.hash === rec.hash) return rec;
    if (!(await verifySecret(bearer, rec))) throw unauthorized('unknown or revoked token');
    if (this.#verified.size >= VERIFIED_CACHE_MAX) this.#verified.clear();
    this.#verified.set(key, { name, hash: rec.hash });
    return rec;
  }
}
