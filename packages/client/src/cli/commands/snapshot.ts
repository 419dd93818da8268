/**
 * `tenure snapshot save FILE` and `tenure snapshot inspect FILE` (docs/operations.md "Backup and
 * restore"; the route is `GET /v1/cluster/snapshot`, docs/api.md). `save` asks a follower when one
 * of the endpoints is (so the leader never encodes the state), streams the backup into
 * `FILE.partial` while checking it chunk by chunk (bounded memory), and renames it to FILE only
 * when the whole file arrived and its checksum holds. It never replaces an existing FILE unless
 * `--force` is given. `inspect` runs the restore's checks (coord-state backup-check.ts) on a file.
 */
import { access, link, open, readFile, rename, rm } from 'node:fs/promises';
import type { Command } from 'commander';
import {
  BACKUP_CHECKS,
  checkBackup,
  SnapshotFileReader,
  type SnapshotFileHeader,
} from '../../contract.js';
import { errorFromResponse, TenureError } from '../../errors.js';
import { normalizeEndpoint } from '../../transport.js';
import { parseEndpoints } from '../args.js';
import { DEFAULT_ENDPOINTS, type CliRun, type GlobalOptions } from '../context.js';
import { UsageError } from '../exit-codes.js';

/** Deadline of each attempt until the file starts to arrive (ms), when `--timeout` is not given. */
const SNAPSHOT_START_MS_DEFAULT = 30_000;

/** Adds the `snapshot` command group to `program`. */
export function addSnapshotCommands(program: Command, run: CliRun): void {
  const group = program
    .command('snapshot')
    .description('backups: save a consistent snapshot of the cluster, check a saved one');
  group
    .command('save')
    .argument(
      '<file>',
      'where to write the backup (written as FILE.partial, renamed when complete)',
    )
    .option('--force', 'replace FILE if it exists (without it, an existing FILE is an error)')
    .description(
      'save a consistent snapshot of the whole state (GET /v1/cluster/snapshot, an admin route) to ' +
        'FILE, checked against its checksum; a follower among --endpoints is asked first, so the ' +
        'leader does not encode it; restore with tenure-server --restore FILE',
    )
    .action(async (file: string, opts: { force?: boolean }, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      const endpoints = parseEndpoints(
        globals.endpoints ?? run.io.env['TENURE_ENDPOINTS'] ?? DEFAULT_ENDPOINTS,
      );
      const replace = opts.force === true;
      if (!replace && (await exists(file))) throw fileExists(file);
      const startMs = globals.timeout ?? SNAPSHOT_START_MS_DEFAULT;
      const header = await saveSnapshot(endpoints, file, replace, startMs, run.io.interrupt);
      report(run, globals.json === true, 'saved', file, header);
    });
  group
    .command('inspect')
    .argument('<file>', 'a backup file')
    .description(
      `check a backup file as tenure-server --restore does (${BACKUP_CHECKS.join(', ')}) and ` +
        'print its header',
    )
    .action(async (file: string, _opts: unknown, command: Command) => {
      const header = await inspectSnapshot(file);
      const json = command.optsWithGlobals<GlobalOptions>().json === true;
      report(run, json, 'ok', file, header, BACKUP_CHECKS);
    });
}

function report(
  run: CliRun,
  json: boolean,
  verb: string,
  file: string,
  h: SnapshotFileHeader,
  checked: readonly string[] = [],
): void {
  const checks = checked.length === 0 ? '' : `; checked: ${checked.join(', ')}`;
  run.emit(
    json,
    { file, ...h, ...(checked.length === 0 ? {} : { checked }) },
    `${verb} ${file}: cluster ${h.clusterId}, index ${h.index}, term ${h.term}, ` +
      `${h.payloadBytes} bytes of state, sha256 ${h.sha256}, taken ${h.createdAt} by ${h.nodeId}` +
      checks,
  );
}

/**
 * Checks a saved file with the restore's own checks (checkBackup: BACKUP_CHECKS); resolves with its
 * header, rejects with SnapshotFileError naming the check that failed.
 */
export async function inspectSnapshot(file: string): Promise<SnapshotFileHeader> {
  return checkBackup(await readFile(file)).header;
}

/**
 * Asks each endpoint in turn (a follower relays the leader's file) until one sends the file;
 * writes and checks it. Rejects with the last TenureError, or SnapshotFileError for a bad file.
 */
async function saveSnapshot(
  endpoints: readonly string[],
  file: string,
  replace: boolean,
  startMs: number,
  interrupt: AbortSignal,
): Promise<SnapshotFileHeader> {
  let last: unknown = null;
  for (const endpoint of await followerFirst(endpoints, startMs, interrupt)) {
    const res = await fetchSnapshot(endpoint, startMs, interrupt).catch((err: unknown) => {
      last = err;
      return null;
    });
    if (res === null) continue;
    if (res.status === 200 && res.body !== null) return writeChecked(res.body, file, replace);
    const body: unknown = await res.json().catch(() => null);
    last = errorFromResponse(res.status, body);
    // Another node may still answer: only a node without a leader, or a busy one, is skipped.
    if (res.status !== 503 && res.status !== 429) break;
  }
  throw last instanceof Error
    ? last
    : new TenureError('no endpoint answered', { code: 'unavailable', outcomeUnknown: false });
}

/**
 * `endpoints` with the first one that is a follower (by its `GET /v1/cluster`) moved to the front:
 * the node asked encodes the backup, and a follower doing it never stalls the leader.
 */
async function followerFirst(
  endpoints: readonly string[],
  startMs: number,
  interrupt: AbortSignal,
): Promise<string[]> {
  for (const endpoint of endpoints) {
    const url = `${normalizeEndpoint(endpoint)}/v1/cluster`;
    const signal = AbortSignal.any([interrupt, AbortSignal.timeout(startMs)]);
    const view = await fetch(url, { signal })
      .then((res) => (res.ok ? (res.json() as Promise<{ id?: unknown; leader?: unknown }>) : null))
      .catch(() => null);
    if (view !== null && typeof view.leader === 'string' && view.id !== view.leader)
      return [endpoint, ...endpoints.filter((e) => e !== endpoint)];
  }
  return [...endpoints];
}

/** GET the route; `startMs` bounds the wait for the answer to start, not the download. */
async function fetchSnapshot(
  endpoint: string,
  startMs: number,
  interrupt: AbortSignal,
): Promise<Response> {
  const url = `${normalizeEndpoint(endpoint)}/v1/cluster/snapshot`;
  const abort = new AbortController();
  const onInterrupt = (): void => abort.abort(interrupt.reason);
  interrupt.addEventListener('abort', onInterrupt, { once: true });
  const timer = setTimeout(() => abort.abort(new Error(`no answer within ${startMs} ms`)), startMs);
  try {
    return await fetch(url, {
      signal: abort.signal,
      headers: { 'request-timeout-ms': String(startMs) },
    });
  } catch (cause) {
    interrupt.removeEventListener('abort', onInterrupt);
    throw new TenureError(`${endpoint} did not send a snapshot: ${String(cause)}`, {
      code: 'unavailable',
      cause,
    });
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Streams `body` to FILE.partial through a SnapshotFileReader, fsyncs it and moves it to FILE
 * once it checks: a rename when `replace`, else a hard link that fails if FILE appeared meanwhile
 * (so an existing FILE is never overwritten). On any failure FILE.partial is removed and FILE is
 * untouched.
 */
async function writeChecked(
  body: ReadableStream<Uint8Array>,
  file: string,
  replace: boolean,
): Promise<SnapshotFileHeader> {
  const partial = `${file}.partial`;
  const out = await open(partial, 'w');
  const reader = new SnapshotFileReader();
  try {
    for await (const chunk of body) {
      reader.push(chunk);
      await out.write(chunk);
    }
    const { header } = reader.finish();
    await out.sync();
    await out.close();
    if (replace) await rename(partial, file);
    else await linkNew(partial, file);
    return header;
  } catch (err) {
    await out.close().catch(() => undefined);
    await rm(partial, { force: true });
    throw err;
  }
}

/** Hard-links `from` to the new name `to` and removes `from`; `fileExists` when `to` exists. */
async function linkNew(from: string, to: string): Promise<void> {
  try {
    await link(from, to);
  } catch (err) {
    throw (err as NodeJS.ErrnoException).code === 'EEXIST' ? fileExists(to) : err;
  }
  await rm(from);
}

async function exists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}

/** The usage error (exit 2) of a save that would replace `file`. */
function fileExists(file: string): UsageError {
  return new UsageError(`${file} already exists; pass --force to replace it`);
}
