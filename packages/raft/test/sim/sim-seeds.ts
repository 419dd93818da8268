/**
 * Shared driver of the simulation test slice: runs a range of seeds and sums what they did, so each
 * test file can assert "no violation" and "the runs were not vacuous" (they elected, committed,
 * read, crashed and partitioned).
 */
import { runSimulation } from '../../src/testing/index.js';
import type { SimMode, SimOptions, SimResult } from '../../src/testing/index.js';

/** Totals over a range of seeds. */
export interface SeedSummary {
  readonly failures: readonly string[];
  readonly seeds: number;
  readonly events: number;
  readonly committed: number;
  readonly leaderTerms: number;
  readonly readsChecked: number;
  readonly writesAcked: number;
  readonly crashes: number;
  readonly partitions: number;
  /** Liveness mode: the slowest heal → established leader / heal → committed write, in sim ms. */
  readonly leaderAfterHealMsMax: number;
  readonly commitAfterHealMsMax: number;
}

/** One line per failing seed: the violation and the command that replays it. */
export function describeFailure(r: SimResult): string {
  return `seed ${r.seed}: ${r.violation?.message.split('\n')[0] ?? '?'} — replay: ${r.replay}`;
}

/** Run seeds [from, from + count) with the given node count and mode. */
export function runSeeds(
  from: number,
  count: number,
  nodes: 3 | 5,
  mode: SimMode,
  extra: Omit<SimOptions, 'seed' | 'nodes' | 'mode'> = {},
): SeedSummary {
  const failures: string[] = [];
  let events = 0;
  let committed = 0;
  let leaderTerms = 0;
  let readsChecked = 0;
  let writesAcked = 0;
  let crashes = 0;
  let partitions = 0;
  let leaderAfterHealMsMax = 0;
  let commitAfterHealMsMax = 0;
  for (let seed = from; seed < from + count; seed++) {
    const r = runSimulation({ ...extra, seed, nodes, mode });
    if (!r.ok) failures.push(describeFailure(r));
    const s = r.stats;
    events += s.events;
    committed += s.committed;
    leaderTerms += s.leaderTerms;
    readsChecked += s.readsChecked;
    writesAcked += s.clients.writesAcked;
    crashes += s.faults.crashes;
    partitions += s.faults.partitions;
    leaderAfterHealMsMax = Math.max(leaderAfterHealMsMax, s.leaderAfterHealMs ?? 0);
    commitAfterHealMsMax = Math.max(commitAfterHealMsMax, s.commitAfterHealMs ?? 0);
  }
  return {
    failures,
    seeds: count,
    events,
    committed,
    leaderTerms,
    readsChecked,
    writesAcked,
    crashes,
    partitions,
    leaderAfterHealMsMax,
    commitAfterHealMsMax,
  };
}
