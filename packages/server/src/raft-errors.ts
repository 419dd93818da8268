/**
 * Recognise Raft's `not_leader` by its stable `code` (packages/raft/src/errors.ts), so the gateway
 * works with any RaftNodeApi implementation (real node or the in-process test fake). The mapping of
 * every Raft code to an HTTP answer is a table in error-tables.ts.
 */

/**
 * `not_leader`: nothing was applied; `leaderHint` names the believed leader or null; `handedOver`:
 * this node handed leadership over for the request itself (NotLeaderError.handedOver).
 */
export function notLeaderHint(
  err: unknown,
): { leaderHint: string | null; handedOver: boolean } | null {
  if (
    typeof err === 'object' &&
    err !== null &&
    (err as { code?: unknown }).code === 'not_leader'
  ) {
    const { leaderHint: hint, handedOver } = err as { leaderHint?: unknown; handedOver?: unknown };
    return { leaderHint: typeof hint === 'string' ? hint : null, handedOver: handedOver === true };
  }
  return null;
}
