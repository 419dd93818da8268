/**
 * The mark a removed member leaves in its own data directory (docs/operations.md, "Remove a
 * member"): the entry that removes a follower never reaches it, so its stored membership still
 * lists it. Once it learns of its removal it writes this file; every later start on that data —
 * with `--peers` or `--join` — is refused (exit 2) before it talks to the cluster.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { StartRefusedError } from './membership-startup.js';

/** File name of the mark inside the data directory (LevelDB ignores files it did not write). */
export const REMOVED_MARK_FILE = 'removed-member.json';

/** What the mark records. */
interface RemovedMark {
  readonly nodeId: string;
  /** Wall-clock time the node learned of its removal, ISO 8601. */
  readonly removedAt: string;
}

/**
 * Records that `nodeId` was removed, synchronously (the process exits right after). Throws the
 * file system's error when the directory cannot be written; the caller logs it.
 */
export function markRemoved(dataDir: string, nodeId: string): void {
  const mark: RemovedMark = { nodeId, removedAt: new Date().toISOString() };
  writeFileSync(join(dataDir, REMOVED_MARK_FILE), `${JSON.stringify(mark)}\n`);
}

/** True when `dataDir` holds the mark of a removed member (a missing directory: false). */
export function hasRemovedMark(dataDir: string): boolean {
  return existsSync(join(dataDir, REMOVED_MARK_FILE));
}

/**
 * Throws StartRefusedError when `dataDir` holds the mark of a removed member, saying how to come
 * back (wipe the directory, `--join`, promote). A missing directory or mark passes.
 */
export function refuseIfRemoved(dataDir: string, nodeId: string): void {
  let text: string;
  try {
    text = readFileSync(join(dataDir, REMOVED_MARK_FILE), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  let removedAt = 'earlier';
  try {
    removedAt = `at ${(JSON.parse(text) as RemovedMark).removedAt}`;
  } catch {
    // a damaged mark still refuses
  }
  throw new StartRefusedError(
    `data directory ${dataDir} belongs to member ${nodeId}, which was removed from the cluster ` +
      `(${removedAt}); to bring ${nodeId} back, wipe the directory, start it with --join <a member> ` +
      'and promote it (docs/operations.md)',
  );
}
