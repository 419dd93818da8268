/**
 * The checks a backup file must pass before anything trusts it (docs/operations.md "Backup and
 * restore"): `tenure snapshot inspect` and `tenure-server --restore` both run `checkBackup`, so a
 * file that inspects clean passes every check a restore makes of the file itself. The restore then
 * also loads the state and checks its target (a new cluster id, an empty data directory). Imports
 * msgpackr only: the client ships it (packages/client/scripts/pack-wire.mjs).
 */
import { snapshotPosition, STATE_SNAPSHOT_FORMAT } from './snapshot-position.js';
import { readSnapshotFile, SnapshotFileError, type SnapshotFileHeader } from './snapshot-file.js';

/** What `checkBackup` verified, in order, for people (the CLI prints it). */
export const BACKUP_CHECKS: readonly string[] = [
  'version',
  'header',
  'length',
  'sha256 checksum',
  'state format',
  'header index and cluster time match the payload',
];

/** A backup that passed every check of BACKUP_CHECKS. */
export interface CheckedBackup {
  readonly header: SnapshotFileHeader;
  readonly payload: Uint8Array;
}

/**
 * Checks a whole backup file in memory (BACKUP_CHECKS). Throws SnapshotFileError naming the first
 * check that failed. Decoding the whole state is left to the restore (it needs the state machine).
 */
export function checkBackup(bytes: Uint8Array): CheckedBackup {
  const { header, payload } = readSnapshotFile(bytes);
  if (header.stateFormat !== STATE_SNAPSHOT_FORMAT)
    throw new SnapshotFileError(
      'unsupported_state_format',
      `state format ${header.stateFormat} is not ${STATE_SNAPSHOT_FORMAT}, the one this build reads`,
    );
  let position;
  try {
    position = snapshotPosition(payload);
  } catch (err) {
    throw new SnapshotFileError('bad_state', `the payload is not a state snapshot: ${text(err)}`);
  }
  if (position.lastIndex !== header.index || position.lastTimeMs !== header.clusterTimeMs)
    throw new SnapshotFileError(
      'header_mismatch',
      `the header (index ${header.index}, cluster time ${header.clusterTimeMs}) does not match ` +
        `its payload (index ${position.lastIndex}, cluster time ${position.lastTimeMs})`,
    );
  return { header, payload };
}

function text(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
