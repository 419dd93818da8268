/**
 * Checks `Authorization: Bearer <token>` against the node's applied state (docs/security.md). The
 * check runs where the request is served, so a revocation takes effect on a node as soon as that
 * node applies the revoking entry. Verified bearers are cached (keyed by their SHA-256, never the
 * text) together with the hash they matched: an entry counts only while the token record still
 * has that very hash, so revoking (or re-creating) a token invalidates it at once. Refused
 * bearers are remembered the same way (a client retrying a wrong token costs one check), and at
 * most VERIFYING_MAX checks run at once (docs/security.md, Abuse resistance).
 */
import { createHash } from 'node:crypto';
import type { TokenRecord } from '@tenure/coord-state';
import { HttpError } from '../http-error.js';
import { tokenNameOf, verifySecret } from './secrets.js';

/** Verified bearers remembered at most (the cache is emptied when full). */
export const VERIFIED_CACHE_MAX = 10_000;
/** Longest bearer text looked at; longer ones are refused without hashing. */
export const BEARER_CHARS_MAX = 512;

/**
 * Secret checks (scrypt, 16 MiB each, on libuv's thread pool, shared with disk I/O) running at
 * once; the rest wait in line. A flood of made-up tokens thus costs at most this many threads.
 */
export const VERIFYING_MAX = 2;
/** Checks that may wait in line; beyond, 429 `resource_exhausted` with Retry-After. */
export const VERIFY_QUEUE_MAX = 256;

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
  /** sha256(bearer) → the hash it failed against. */
  readonly #refused = new Map<string, string>();
  #verifying = 0;
  readonly #line: (() => void)[] = [];

  readonly #verifyingMax: number;
  readonly #queueMax: number;

  /** `limits` default to VERIFYING_MAX and VERIFY_QUEUE_MAX. */
  constructor(
    read: TokenReader,
    limits: { readonly verifyingMax?: number; readonly queueMax?: number } = {},
  ) {
    this.#read = read;
    this.#verifyingMax = limits.verifyingMax ?? VERIFYING_MAX;
    this.#queueMax = limits.queueMax ?? VERIFY_QUEUE_MAX;
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
    if (this.#refused.get(key) === rec.hash) throw unauthorized('unknown or revoked token');
    if (!(await this.#check(bearer, rec))) {
      if (this.#refused.size >= VERIFIED_CACHE_MAX) this.#refused.clear();
      this.#refused.set(key, rec.hash);
      throw unauthorized('unknown or revoked token');
    }
    if (this.#verified.size >= VERIFIED_CACHE_MAX) this.#verified.clear();
    this.#verified.set(key, { name, hash: rec.hash });
    return rec;
  }

  /** verifySecret, at most `verifyingMax` at once; throws 429 when the line is full. */
  async #check(bearer: string, rec: TokenRecord): Promise<boolean> {
    if (this.#verifying >= this.#verifyingMax) {
      if (this.#line.length >= this.#queueMax)
        throw new HttpError(
          'resource_exhausted',
          'too many token checks are waiting on this node; retry shortly',
          { limit: this.#queueMax },
          { 'retry-after': '1' },
        );
      await new Promise<void>((resolve) => this.#line.push(resolve));
    } else this.#verifying++;
    try {
      return await verifySecret(bearer, rec);
    } finally {
      // Hand the slot to the next in line (the count stays), or free it.
      const next = this.#line.shift();
      if (next !== undefined) next();
      else this.#verifying--;
    }
  }
}
