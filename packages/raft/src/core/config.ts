/**
 * Start-time checks of a CoreConfig (TIGER style: relations between limits are checked once).
 */
import assert from 'node:assert/strict';
import type { CoreConfig } from './types.js';

/** Most committed entries handed out in one Ready (bounds one apply batch). */
export const committedEntriesPerReadyMax = 4096;

/** Default of CoreConfig.catchUpEntriesMax (dissertation §4.2.1 catch-up bound). */
export const catchUpEntriesMaxDefault = 100;

/**
 * CoreConfig.commitNoticeDelayTicks of the runtime (RaftNode): 2 ticks (20 ms at the default
 * tickMs), long enough for the next write of a one-client loop to carry the commit, short next to a
 * heartbeat. Measured in docs/architecture.md, "Cost of a write". A follower then learns a commit
 * together with new entries it must fsync before it can apply; readiness allows for that (its
 * target is the commit heard `readyLagMs` ago, commit-heard.ts).
 */
export const runtimeCommitNoticeDelayTicks = 2;

/** The delay the simulator runs on about half its seeds, so the option stays proven safe. */
export const simulatedCommitNoticeDelayTicks = 2;

/**
 * Throws (assertion) if `config` is inconsistent: voters unique (id need not be one: a joining node),
 * 1 ≤ heartbeatTicks < electionTimeoutTicks (Raft §5.2), every `…Max` ≥ 1, snapshotRetryTicks ≥ 1 if set.
 */
export function validateCoreConfig(config: CoreConfig): void {
  assert.equal(new Set(config.voters).size, config.voters.length, 'voters must be unique');
  if (config.catchUpEntriesMax !== undefined) {
    assert.ok(
      Number.isInteger(config.catchUpEntriesMax) && config.catchUpEntriesMax >= 0,
      'catchUpEntriesMax ≥ 0',
    );
  }
  assert.ok(
    Number.isInteger(config.heartbeatTicks) && config.heartbeatTicks >= 1,
    'heartbeatTicks ≥ 1',
  );
  assert.ok(
    Number.isInteger(config.electionTimeoutTicks) &&
      config.electionTimeoutTicks > config.heartbeatTicks,
    'electionTimeoutTicks must be an integer > heartbeatTicks',
  );
  if (config.commitNoticeDelayTicks !== undefined)
    assert.ok(
      Number.isInteger(config.commitNoticeDelayTicks) && config.commitNoticeDelayTicks >= 0,
      'commitNoticeDelayTicks ≥ 0',
    );
  assert.ok(
    Number.isInteger(config.entriesPerMessageMax) && config.entriesPerMessageMax >= 1,
    'entriesPerMessageMax ≥ 1',
  );
  assert.ok(
    Number.isInteger(config.bytesPerMessageMax) && config.bytesPerMessageMax >= 1,
    'bytesPerMessageMax ≥ 1',
  );
  assert.ok(
    Number.isInteger(config.inflightMessagesMax) && config.inflightMessagesMax >= 1,
    'inflightMessagesMax ≥ 1',
  );
  if (config.snapshotRetryTicks !== undefined) {
    assert.ok(
      Number.isInteger(config.snapshotRetryTicks) && config.snapshotRetryTicks >= 1,
      'snapshotRetryTicks ≥ 1',
    );
  }
}
