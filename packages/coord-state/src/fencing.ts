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

/**
 * Log entries the old cluster may commit after its backup without a restored cluster ever
 * re-issuing one of its tokens (docs/operations.md "Backup and restore"): the restored log starts
 * this many entries past the backup's index.
 */
export const RESTORE_INDEX_GAP = 1_000_000_000;

/**
 * Log index at which a cluster restored from a backup taken at `backupIndex` resumes, so that every
 * token it issues (≥ (index + 1) × TOKENS_PER_ENTRY) is above every token the old cluster issued —
 * those issued after the backup included, as long as it committed fewer than RESTORE_INDEX_GAP
 * entries after it — and above `tokenFloor` (an operator's known highest token; 0 = none).
 * KV revisions and the other index-derived numbers rise past the old ones the same way.
 * Throws (assertion) when the result would leave the safe-integer range of tokens.
 */
export function restoredIndex(backupIndex: number, tokenFloor = 0): number {
  assert(Number.isSafeInteger(backupIndex) && backupIndex >= 0, 'restore: bad backup index');
  assert(Number.isSafeInteger(tokenFloor) && tokenFloor >= 0, 'restore: bad token floor');
  const index = Math.max(
    backupIndex + RESTORE_INDEX_GAP,
    Math.floor(tokenFloor / TOKENS_PER_ENTRY),
  );
  assert(Number.isSafeInteger((index + 2) * TOKENS_PER_ENTRY), 'restore: tokens would pass 2^53');
  return index;
}

/**
 * Largest `tokenFloor` restoredIndex accepts: about half the safe-integer range of tokens, so the
 * restored cluster still has room for about 5 × 10^12 log entries before a token would pass 2^53.
 */
export const TOKEN_FLOOR_MAX = 4_000_000_000_000_000;
