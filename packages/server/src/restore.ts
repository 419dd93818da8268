/**
 * `tenure-server --restore FILE` (docs/operations.md "Backup and restore"): seeds this node's empty
 * data directory from a backup file, as the first step of a brand-new cluster. Every voter of the
 * new cluster is seeded from the same file with the same `--token-floor`, so all start from one
 * identical Raft snapshot and elect a leader among themselves.
 *
 * Fencing never goes backwards: the snapshot is installed at restoredIndex(backup index, floor)
 * (coord-state fencing.ts), far past the backup's own index, so every token, revision and waiter id
 * the new cluster issues is above all those of the old cluster. Grants live in the backup stay live
 * with their holders and tokens; their remaining time counts on from the backup's cluster time.
 *
 * Refusals (RestoreError, nothing written): an unreadable file, a file that fails its checks
 * (version, header, truncation, checksum), a header that disagrees with its payload, a payload that
 * does not restore, the old cluster's id, a data directory that already has data. The directory
 * is built beside the target and renamed into place only when complete, so a crash or a refusal
 * never leaves a half-restored directory.
 */
import { mkdir, readdir, readFile, rename, rm, rmdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import {
  CoordStateMachine,
  checkBackup,
  rebaseSnapshot,
  restoredIndex,
  type SnapshotFileHeader,
} from '@tenure/coord-state';
import { asIndex, asTerm, LevelRaftStorage } from '@tenure/raft';
import type { ServerConfig } from './config.js';

/** Term of the seeded snapshot and hard state: the new cluster's first election is term 2. */
const RESTORED_TERM = 1;

/** A restore that was refused; `message` names the file and the problem. Nothing was written. */
export class RestoreError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RestoreError';
  }
}

/** What a restore did. */
export interface RestoreOutcome {
  /** The backup's header. */
  readonly backup: SnapshotFileHeader;
  /** Log index the new cluster's state starts at (its tokens are above index × 1000). */
  readonly restoredIndex: number;
}

/** What `restoreDataDir` needs of the node's configuration. */
export type RestoreTarget = Pick<ServerConfig, 'nodeId' | 'clusterId' | 'dataDir' | 'limits'>;

/**
 * Checks `file` and seeds `target.dataDir` (absent or empty) with its state for a new cluster
 * `target.clusterId`; `tokenFloor` (0 = none) is a token the new cluster must issue above.
 * Throws RestoreError when refused (see the file comment).
 */
export async function restoreDataDir(
  target: RestoreTarget,
  file: string,
  tokenFloor: number,
): Promise<RestoreOutcome> {
  const { header, payload } = await checkedBackup(file, target);
  await checkEmptyDir(target.dataDir);
  const index = restoredIndex(header.index, tokenFloor);
  const data = rebaseSnapshot(payload, index);
  try {
    new CoordStateMachine({ ...target.limits }).restore(data);
  } catch (cause) {
    throw new RestoreError(`${file}: the state in the file does not load: ${errText(cause)}`, {
      cause,
    });
  }
  await seedDir(target, index, header.clusterTimeMs, data);
  return { backup: header, restoredIndex: index };
}

/**
 * Checks a backup file as a restore would (format, checksum, header against payload), without
 * touching any directory: the launcher runs it before it creates anything. Throws RestoreError.
 */
export async function checkBackupFile(file: string): Promise<SnapshotFileHeader> {
  const { header } = await checkedBackup(file, { clusterId: null });
  return header;
}

/** Reads and checks the file (checkBackup, as `tenure snapshot inspect` does), then the cluster id. */
async function checkedBackup(
  file: string,
  target: { readonly clusterId: string | null },
): Promise<{ header: SnapshotFileHeader; payload: Uint8Array }> {
  let bytes: Uint8Array;
  try {
    bytes = await readFile(file);
  } catch (cause) {
    throw new RestoreError(`cannot read ${file}: ${errText(cause)}`, { cause });
  }
  let checked;
  try {
    checked = checkBackup(bytes);
  } catch (cause) {
    throw new RestoreError(`${file}: ${errText(cause)}`, { cause });
  }
  const { header, payload } = checked;
  if (header.clusterId === target.clusterId)
    throw new RestoreError(
      `${file} is a backup of cluster "${header.clusterId}": a restore starts a new cluster, ` +
        'give it a new --cluster-id (nodes of the old cluster must never talk to the new one)',
    );
  return { header, payload };
}

async function checkEmptyDir(dir: string): Promise<void> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw new RestoreError(`cannot read data directory ${dir}: ${errText(err)}`, { cause: err });
  }
  if (names.length > 0)
    throw new RestoreError(
      `data directory ${dir} is not empty: a restore seeds the empty directory of a new node ` +
        '(start an already restored node without --restore)',
    );
}

/** Writes the snapshot into a directory beside `dataDir`, then renames it into place. */
async function seedDir(
  target: RestoreTarget,
  index: number,
  clusterTimeMs: number,
  data: Uint8Array,
): Promise<void> {
  const dir = target.dataDir;
  const building = `${dir}.restoring`;
  await rm(building, { recursive: true, force: true });
  await mkdir(dirname(dir), { recursive: true });
  try {
    const storage = await LevelRaftStorage.open({
      dataDir: building,
      clusterId: target.clusterId,
      nodeId: target.nodeId,
    });
    try {
      await storage.recover();
      await storage.persist({
        snapshot: {
          meta: { index: asIndex(index), term: asTerm(RESTORED_TERM), clusterTimeMs },
          data,
        },
        hardState: { term: asTerm(RESTORED_TERM), votedFor: null, commitIndex: asIndex(index) },
        entries: [],
      });
    } finally {
      await storage.close();
    }
    await rmdir(dir).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    });
    await rename(building, dir);
  } catch (err) {
    await rm(building, { recursive: true, force: true });
    throw new RestoreError(`cannot write data directory ${dir}: ${errText(err)}`, { cause: err });
  }
}

function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
