/**
 * The local cluster's id, kept with its data in `<dataDir>/cluster-id`: made up (`local-` + 12 random
 * hex digits) on the first launch into an empty directory, read back on every later one, so each
 * local cluster has its own id (nodes refuse peers of another cluster, and the launcher only calls a
 * cluster "up" when the answering node carries this id). A data directory written before the file
 * existed keeps the old shared id `tenure-local`.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Cluster id of data directories created before ids were per cluster. */
export const LEGACY_CLUSTER_ID = 'tenure-local';

/** Read or create the cluster id of the local cluster whose data lives in `dataDir`. */
export function localClusterId(dataDir: string): string {
  const file = join(dataDir, 'cluster-id');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(dataDir, { recursive: true });
  const legacy = readdirSync(dataDir).some((name) => /^n\d+$/.test(name));
  const id = legacy ? LEGACY_CLUSTER_ID : `local-${randomBytes(6).toString('hex')}`;
  writeFileSync(file, `${id}\n`);
  return id;
}
