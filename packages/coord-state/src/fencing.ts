/**
 * The fencing-token scheme (docs/concepts.md): `fencingToken = index × TOKENS_PER_ENTRY + seq`, where
 * `index` is the log index of the entry that made the grant and `seq` counts earlier grants of the
 * same resource within that entry (0 for the first). Like etcd's revision it needs no tombstones:
 * log indexes only grow (across release, expiry, deletion of the record, snapshots and restarts),
 * so every later grant of any resource gets a larger token. `seq` covers the rare entry that grants
 * one resource twice (e.g. expiry grants a waiter, then the command releases it and grants the next).
 */
import assert from 'node:assert';
import type { FencingToken } from './api.js';

/** Room for grants of one resource within one log entry. Tokens stay exact up to index ≈ 9·10¹². */
export const TOKENS_PER_ENTRY = 1000;

/**
 * Next token for a resource whose last issued token is `lastFencingToken` (0 if none known),
 * granted by the entry at `index`. Asserts the token stays inside the entry's block and is safe.
 */
export function nextFencingToken(index: number, lastFencingToken: FencingToken): FencingToken {
  const base = index * TOKENS_PER_ENTRY;
  const token = lastFencingToken >= base ? lastFencingToken + 1 : base;
  assert(token < base + TOKENS_PER_ENTRY, 'fencing: too many grants of one resource in one entry');
  assert(Number.isSafeInteger(token), 'fencing: token beyond 2^53');
  return token;
}

/** Log index of the entry that issued `fencingToken` (for docs, debugging and tests). */
export function tokenIndex(fencingToken: FencingToken): number {
  return Math.floor(fencingToken / TOKENS_PER_ENTRY);
}
