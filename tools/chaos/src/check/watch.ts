/**
 * Checker: the streaming watch (docs/api.md "Streaming watch"), per iterator of `client.watch()`
 * recorded by the watchers (primitives-workload.ts: `watch.open`, `watch.event`, `watch.end`).
 *
 * - `watch-revision-regression`: a change with a lower revision after a higher one;
 * - `watch-before-start`: a change at or before the `fromRevision` the iterator started after;
 * - `watch-duplicate`: the same change twice in one iterator (the library resumes without repeats);
 * - `watch-missed-write`: an acknowledged KV write (`kv.put` / `prim.write` ok, whose `revision` is
 *   its log index) of a key under the iterator's prefix, with a revision after `fromRevision` and
 *   no later than the last change the iterator yielded, that the iterator never yielded. The library
 *   ends an iterator with `compacted` rather than skip, so nothing may be missing inside its range;
 * - `watch-wrong-value`: the `put` change at that revision carries another value than was written.
 * Only acknowledged writes are required, and only inside the range the iterator certainly covered,
 * so unknown outcomes and iterators that stopped early cannot cause a false positive.
 */
import type {
  Checker,
  CheckResult,
  HistoryOp,
  JsonObject,
  RunRecord,
  Violation,
} from '../types.js';
import { canonicalJson, num, okValue, str } from './history.js';

/** One recorded iterator: where it started and the changes it yielded, in order. */
export interface WatchStream {
  readonly watcher: string;
  readonly stream: number;
  readonly fromRevision: number;
  readonly prefix: string;
  readonly events: readonly { readonly opId: number; readonly event: JsonObject }[];
  /** `watch.end` reason (`stopped`, `compacted`, `refused`), or null when none was recorded. */
  readonly endReason: string | null;
}

/** Groups the watchers' ops into streams (events ordered by `seq`). */
export function watchStreams(ops: readonly HistoryOp[]): WatchStream[] {
  const streams = new Map<
    string,
    { s: Omit<WatchStream, 'events'>; ev: { seq: number; opId: number; event: JsonObject }[] }
  >();
  const keyOf = (op: HistoryOp): string =>
    `${str(op.args, 'watcher')}\u0000${num(op.args, 'stream')}`;
  for (const op of ops) {
    if (op.kind !== 'watch.open') continue;
    streams.set(keyOf(op), {
      s: {
        watcher: str(op.args, 'watcher') ?? op.process,
        stream: num(op.args, 'stream') ?? 0,
        fromRevision: num(op.args, 'fromRevision') ?? 0,
        prefix: str(op.args, 'prefix') ?? '',
        endReason: null,
      },
      ev: [],
    });
  }
  for (const op of ops) {
    const entry = streams.get(keyOf(op));
    if (entry === undefined) continue;
    if (op.kind === 'watch.end') entry.s = { ...entry.s, endReason: str(op.args, 'reason') };
    const v = okValue(op.outcome);
    if (op.kind === 'watch.event' && v !== null)
      entry.ev.push({ seq: num(op.args, 'seq') ?? 0, opId: op.opId, event: v });
  }
  return [...streams.values()].map(({ s, ev }) => ({
    ...s,
    events: ev.sort((a, b) => a.seq - b.seq).map(({ opId, event }) => ({ opId, event })),
  }));
}

/** Acknowledged KV writes: key → revision → the op (ok `kv.put` / `prim.write` with a revision). */
function ackedWrites(ops: readonly HistoryOp[]): Map<number, HistoryOp> {
  const byRevision = new Map<number, HistoryOp>();
  for (const op of ops) {
    if (op.kind !== 'kv.put' && op.kind !== 'prim.write') continue;
    const rev = num(okValue(op.outcome), 'revision');
    if (rev !== null) byRevision.set(rev, op);
  }
  return byRevision;
}

/** Checks one stream against the acknowledged writes. */
function checkStream(
  s: WatchStream,
  acked: ReadonlyMap<number, HistoryOp>,
  out: Violation[],
): number {
  const where = `watch ${s.watcher}#${s.stream} (from ${s.fromRevision}, prefix ${s.prefix})`;
  let last = s.fromRevision;
  const seen = new Set<string>();
  const puts = new Map<string, JsonObject>();
  for (const { opId, event } of s.events) {
    const rev = num(event, 'revision');
    if (rev === null) continue;
    if (rev <= s.fromRevision)
      out.push({
        property: 'watch-before-start',
        opIds: [opId],
        message: `${where}: change at revision ${rev} ${canonicalJson(event)}`,
      });
    if (rev < last)
      out.push({
        property: 'watch-revision-regression',
        opIds: [opId],
        message: `${where}: revision ${rev} after ${last}: ${canonicalJson(event)}`,
      });
    last = Math.max(last, rev);
    const c = canonicalJson(event);
    if (seen.has(c))
      out.push({
        property: 'watch-duplicate',
        opIds: [opId],
        message: `${where}: ${c} yielded twice`,
      });
    seen.add(c);
    if (str(event, 'kind') === 'kv' && str(event, 'type') === 'put')
      puts.set(`${rev}\u0000${str(event, 'name')}`, event);
  }
  let required = 0;
  for (const [rev, op] of acked) {
    const key = str(op.args, 'key');
    if (key === null || !key.startsWith(s.prefix) || rev <= s.fromRevision || rev > last) continue;
    required++;
    const ev = puts.get(`${rev}\u0000${key}`);
    if (ev === undefined) {
      out.push({
        property: 'watch-missed-write',
        opIds: [op.opId],
        message: `${where}: write of ${key} acknowledged at revision ${rev} never yielded, though the iterator reached revision ${last}`,
      });
      continue;
    }
    const written = op.args['value'];
    if (written !== undefined && canonicalJson(ev['value']) !== canonicalJson(written))
      out.push({
        property: 'watch-wrong-value',
        opIds: [op.opId],
        message: `${where}: ${key}@${rev} yielded ${canonicalJson(ev['value'])}, written ${canonicalJson(written)}`,
      });
  }
  return required;
}

/** Checks every recorded watch iterator. */
export function checkWatch(ops: readonly HistoryOp[]): CheckResult {
  const streams = watchStreams(ops);
  const acked = ackedWrites(ops);
  const violations: Violation[] = [];
  let required = 0;
  for (const s of streams) required += checkStream(s, acked, violations);
  return {
    ok: violations.length === 0,
    violations,
    stats: {
      streams: streams.length,
      events: streams.reduce((n, s) => n + s.events.length, 0),
      compactedEnds: streams.filter((s) => s.endReason === 'compacted').length,
      ackedWritesRequired: required,
    },
  };
}

/** The checker object. */
export function watchChecker(): Checker {
  return { name: 'watch', check: (run: RunRecord) => checkWatch(run.ops) };
}
