/**
 * Classify errors from the Raft runtime by their stable `code` (packages/raft/src/errors.ts), so
 * the server works with any RaftNodeApi implementation (real node or the in-process test fake).
 */

/** `not_leader`: nothing was applied; `leaderHint` names the believed leader or null. */
export function notLeaderHint(err: unknown): { leaderHint: string | null } | null {
  if (
    typeof err === 'object' &&
    err !== null &&
    (err as { code?: unknown }).code === 'not_leader'
  ) {
    const hint = (err as { leaderHint?: unknown }).leaderHint;
    return { leaderHint: typeof hint === 'string' ? hint : null };
  }
  return null;
}

/** The error's stable code when it is a Raft operating error, else null. */
export function raftErrorCode(
  err: unknown,
): 'not_leader' | 'timeout' | 'stopped' | 'resource_exhausted' | 'storage_identity' | null {
  if (typeof err !== 'object' || err === null) return null;
  const code = (err as { code?: unknown }).code;
  switch (code) {
    case 'not_leader':
    case 'timeout':
    case 'stopped':
    case 'resource_exhausted':
    case 'storage_identity':
      return code;
    default:
      return null;
  }
}
