/**
 * Start-time checks of a CoreConfig (TIGER style: relations between limits are checked once).
 */
import assert from 'node:assert/strict';
import type { CoreConfig } from './types.js';

/** Most committed entries handed out in one Ready (bounds one apply batch). */
export const committedEntriesPerReadyMax = 4096;

/**
 * Throws (assertion) if `config` is inconsistent: `id` must be a voter, voters unique and non-empty,
 * 1 ≤ heartbeatTicks < electionTimeoutTicks (Raft §5.2), every `…Max` ≥ 1, snapshotRetryTicks ≥ 1 if set.
 */
export function validateCoreConfig(config: CoreConfig): void {
  assert.ok(config.voters.length >= 1, 'voters must not be empty');
  assert.equal(new Set(config.voters).size, config.voters.length, 'voters must be unique');
  assert.ok(config.voters.includes(config.id), 'id must be one of voters');
  assert.ok(
    Number.isInteger(config.heartbeatTicks) && config.heartbeatTicks >= 1,
    'heartbeatTicks ≥ 1',
  );
  assert.ok(
    Number.isInteger(config.electionTimeoutTicks) &&
      config.electionTimeoutTicks > config.heartbeatTicks,
    'electionTimeoutTicks must be an integer > heartbeatTicks',
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
