/**
 * Which Raft identity answered a `/v1/cluster` sample. A node keeps its identity across restarts
 * on its own data (term and log are persisted, Raft Figure 2); a node whose data directory was
 * wiped and that rejoined under its old id (remove → wipe → `--join` → promote,
 * docs/operations.md "Replace a failed node") is a new identity: its term and commit index start
 * again from 0. The checkers compare persistent state only within one identity.
 */
import type { LeaderSample } from '../types.js';

/**
 * `n2` for the node's first data directory, `n2/g1` after its first wipe; null when the sample's
 * data generation is unknown (the node was wiped while the poll was in flight). Samples recorded
 * without the field (runs older than membership faults) count as the first directory.
 */
export function nodeIdentity(s: Pick<LeaderSample, 'node' | 'dataGeneration'>): string | null {
  const generation = s.dataGeneration === undefined ? 0 : s.dataGeneration;
  if (generation === null) return null;
  return generation === 0 ? s.node : `${s.node}/g${generation}`;
}
