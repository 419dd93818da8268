/**
 * Majority arithmetic over a fixed voter set (Raft §5.2, §5.3, §6.4). Pure helpers.
 */

/** Votes needed to win among `voterCount` voters: ⌊n/2⌋ + 1. */
export function quorumSize(voterCount: number): number {
  return Math.floor(voterCount / 2) + 1;
}

/** Outcome of an election tally. */
export type VoteResult = 'won' | 'lost' | 'pending';

/** Tally `votes` (voter → granted) among `voterCount` voters. */
export function tallyVotes(votes: ReadonlyMap<string, boolean>, voterCount: number): VoteResult {
  let granted = 0;
  let rejected = 0;
  for (const v of votes.values()) {
    if (v) granted++;
    else rejected++;
  }
  const quorum = quorumSize(voterCount);
  if (granted >= quorum) return 'won';
  if (rejected > voterCount - quorum) return 'lost';
  return 'pending';
}

/**
 * The largest value that at least a quorum of `values` (one per voter) reach: the k-th largest with
 * k = quorumSize(values.length). Used for the commit index (§5.3) and ReadIndex confirmation (§6.4).
 * Sorts a copy; voter counts are small.
 */
export function quorumValue(values: readonly number[]): number {
  const sorted = values.slice().sort((a, b) => b - a);
  return sorted[quorumSize(values.length) - 1] ?? 0;
}
