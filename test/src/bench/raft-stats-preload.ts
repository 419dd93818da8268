/**
 * Preload for `api-bench --raft-stats DIR` (NODE_OPTIONS=--import into the server processes):
 * wraps LevelRaftStorage.persist from outside, without touching Raft's sources, to measure group
 * commit — how many persist calls, how many entries each carried, and how long each took (fsync
 * included; entry batches and hard-state-only batches apart) — and writes `DIR/<id>-<pid>.raft-stats.json` when the process exits normally.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LevelRaftStorage, type PersistBatch } from '@tenure/raft';
import { percentiles } from '@tenure/testkit';

const dir = process.env.TENURE_RAFT_STATS_DIR;
if (dir !== undefined && dir.length > 0) {
  const stats = {
    persists: 0,
    withEntries: 0,
    entries: 0,
    entriesMax: 0,
    hardStateOnly: 0,
    persistMs: [] as number[],
    hardStateOnlyMs: [] as number[],
    entriesPerPersist: [] as number[],
  };
  const samplesMax = 200_000;
  const original = LevelRaftStorage.prototype.persist;
  LevelRaftStorage.prototype.persist = function persist(
    this: LevelRaftStorage,
    batch: PersistBatch,
  ): Promise<void> {
    const t0 = performance.now();
    stats.persists++;
    const n = batch.entries.length;
    if (n > 0) {
      stats.withEntries++;
      stats.entries += n;
      stats.entriesMax = Math.max(stats.entriesMax, n);
      if (stats.entriesPerPersist.length < samplesMax) stats.entriesPerPersist.push(n);
    } else if (batch.hardState !== null) stats.hardStateOnly++;
    const p = original.call(this, batch);
    // Batches with entries are fsynced; hard-state-only ones mostly carry commitIndex (not fsynced).
    const into = n > 0 ? stats.persistMs : stats.hardStateOnlyMs;
    void p.then(
      () => {
        if (into.length < samplesMax) into.push(performance.now() - t0);
      },
      () => undefined,
    );
    return p;
  };
  process.on('exit', () => {
    const id = process.argv.includes('--id')
      ? process.argv[process.argv.indexOf('--id') + 1]
      : 'node';
    const entriesPerPersist = percentiles(stats.entriesPerPersist);
    const persistMs = percentiles(stats.persistMs);
    const hardStateOnlyMs = percentiles(stats.hardStateOnlyMs);
    const summary = {
      id,
      persists: stats.persists,
      withEntries: stats.withEntries,
      hardStateOnly: stats.hardStateOnly,
      entries: stats.entries,
      entriesPerPersistMean: stats.withEntries === 0 ? 0 : stats.entries / stats.withEntries,
      entriesPerPersistP50: entriesPerPersist.p50 ?? 0,
      entriesPerPersistP99: entriesPerPersist.p99 ?? 0,
      entriesMax: stats.entriesMax,
      entriesPersistMsP50: persistMs.p50 ?? 0,
      entriesPersistMsP99: persistMs.p99 ?? 0,
      hardStateOnlyPersistMsP50: hardStateOnlyMs.p50 ?? 0,
      hardStateOnlyPersistMsP99: hardStateOnlyMs.p99 ?? 0,
    };
    writeFileSync(
      join(dir, `${id}-${process.pid}.raft-stats.json`),
      JSON.stringify(summary, null, 2),
    );
  });
}
