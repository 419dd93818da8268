/**
 * Checker: holder history of leases (docs/api.md "Holder history"; docs/concepts.md cluster time),
 * judged on every ok `GET /v1/leases/{name}/history` of the run against what the clients saw.
 *
 * Per answer (newest first):
 * - `history-malformed`: an entry without holder / token / times, or `endedAtMs` and `endReason`
 *   not null together; `history-end-reason`: a reason that is not one of the documented lease
 *   reasons (`released`, `expired`, `revoked`, `max_hold`, `session_ended`);
 * - `history-order`: tokens not strictly decreasing (newest first = token order: every grant gets a
 *   higher token than every earlier one);
 * - `history-overlap` (names with no shared entry): a live entry that is not the newest, an
 *   entry ending before it began, or a grant beginning (cluster time) before the previous one
 *   ended — cluster time never decreases along the log, and an exclusive grant starts only after
 *   the one before it ended.
 * Against the clients (the merged history, merge.ts):
 * - `history-holder-mismatch`: an entry's token was answered to a client with another holder;
 * - `history-phantom-holder`: an entry's holder sent no acquire of that lease before the read ended;
 * - `history-missing-grant`: a grant a client was answered (ok acquire/renew/GET) before the read
 *   was sent, with a token within the answer's range (≥ its oldest token), is not listed. Ended
 *   grants of an exclusive name end in token order and are dropped oldest first, so what an answer
 *   lists is every grant from its oldest token on;
 * - `history-unexplained-end`: `revoked` with no revoke of the lease (of that token or of every
 *   grant) sent before the read ended and not refused; `released` with no release of that grant
 *   likewise; `max_hold` / `session_ended` for a grant whose acquires asked for no `maxHoldMs` /
 *   `session`;
 * - `history-early-expiry`: `expired` although the read ended before send + ttlMs × (1 − maxDriftRatio)
 *   of an ok acquire/renew of that grant (its acceptance is after its send; the lease-timing rule;
 *   ttlMs is the shortest any acquire/renew of the holder asked for, as a later one may re-arm it),
 *   or although `endedAtMs − grantedAtMs` is below the shortest ttlMs any acquire/renew of the
 *   grant's holder asked for (cluster time: an expiry is due ttlMs after the last renewal);
 * - `history-end-contradicted`: a live entry for a grant whose release or revoke was acknowledged
 *   before the read was sent, or an ended grant shown live (acquire, renew, GET) by an op sent after
 *   the read ended;
 * - `history-rewritten`: a later read (sent after an earlier one ended) lists a grant of the earlier
 *   one's range differently (holder, grant time, or an end that changed or went away) or omits it.
 *
 * Soundness (a correct cluster never fails): facts that could be explained by a request of unknown
 * outcome are taken as explained (any request not refused with a 4xx may have taken effect, at any
 * time after its send); only ok answers prove anything; timing uses lower bounds only (time frozen
 * while leaderless only makes grants end later); `?consistency=stale` reads get the per-answer checks
 * only. Approximations: the checker does not bound lateness (lease-timing does), nor compare cluster
 * times with run times beyond the expiry rule, nor judge shared or session-bound names beyond the
 * per-answer checks (the lease workload's names are exclusive and session-free).
 */
import type {
  Checker,
  CheckResult,
  HistoryOp,
  JsonObject,
  RunRecord,
  Violation,
} from '../types.js';
import { describeOp, effectOf, num, okValue, str } from './history.js';
import { mergeAttempts } from './merge.js';

/** End reasons a lease grant may have (docs/api.md Holder history; `resigned` is elections'). */
export const LEASE_END_REASONS: ReadonlySet<string> = new Set([
  'released',
  'expired',
  'revoked',
  'max_hold',
  'session_ended',
]);

/** One history entry as answered. */
interface Entry {
  readonly holder: string;
  readonly token: number;
  readonly grantedAtMs: number;
  readonly endedAtMs: number | null;
  readonly endReason: string | null;
  readonly shared: boolean;
}

/** One ok history read of a lease. */
interface Read {
  readonly lease: string;
  readonly op: HistoryOp;
  /** Newest first, as answered. */
  readonly entries: readonly Entry[];
  readonly completeMs: number;
}

/** What the clients did and saw on one lease. */
interface LeaseFacts {
  /** holder → its acquire ops (any outcome). */
  readonly acquires: Map<string, HistoryOp[]>;
  /** token → the ok op answering it as the live grant that completed first, with its holder. */
  readonly seen: Map<number, { holder: string; op: HistoryOp }>;
  /** `holder#token` → ok acquire/renew/GET ops answering that grant live. */
  readonly shown: Map<string, HistoryOp[]>;
  /** `holder#token` → release ops not refused. */
  readonly releases: Map<string, HistoryOp[]>;
  /** Revoke ops not refused. */
  readonly revokes: HistoryOp[];
  /** holder → shortest ttlMs its acquires/renews asked for or were answered. */
  readonly ttlMin: Map<string, number>;
}

const grantKey = (holder: string, token: number): string => `${holder}#${token}`;

function push<K, V>(m: Map<K, V[]>, k: K, v: V): void {
  const l = m.get(k);
  if (l === undefined) m.set(k, [v]);
  else l.push(v);
}

/** Indexes the merged lease ops by lease name. */
function leaseFacts(ops: readonly HistoryOp[]): Map<string, LeaseFacts> {
  const out = new Map<string, LeaseFacts>();
  const of = (name: string): LeaseFacts => {
    let f = out.get(name);
    if (f === undefined) {
      f = {
        acquires: new Map(),
        seen: new Map(),
        shown: new Map(),
        releases: new Map(),
        revokes: [],
        ttlMin: new Map(),
      };
      out.set(name, f);
    }
    return f;
  };
  for (const op of ops) {
    const name = str(op.args, 'name');
    if (name === null || !op.kind.startsWith('lease.')) continue;
    const f = of(name);
    const holder = str(op.args, 'holder');
    const refused = effectOf(op.outcome) === 'fail';
    const v = okValue(op.outcome);
    if (op.kind === 'lease.acquire' && holder !== null) push(f.acquires, holder, op);
    if ((op.kind === 'lease.acquire' || op.kind === 'lease.renew') && holder !== null) {
      const ttl = Math.min(num(op.args, 'ttlMs') ?? Infinity, num(v, 'ttlMs') ?? Infinity);
      if (Number.isFinite(ttl)) f.ttlMin.set(holder, Math.min(f.ttlMin.get(holder) ?? ttl, ttl));
    }
    if (op.kind === 'lease.revoke' && !refused) f.revokes.push(op);
    if (op.kind === 'lease.release' && !refused && holder !== null) {
      const t = num(op.args, 'fencingToken');
      if (t !== null) push(f.releases, grantKey(holder, t), op);
    }
    const shownHolder = str(v, 'holder');
    const shownToken = num(v, 'fencingToken');
    if (
      shownHolder === null ||
      shownToken === null ||
      (op.kind !== 'lease.acquire' && op.kind !== 'lease.renew' && op.kind !== 'lease.get') ||
      str(op.args, 'consistency') === 'stale'
    )
      continue;
    const first = f.seen.get(shownToken);
    if (first === undefined || (op.completeMs ?? Infinity) < (first.op.completeMs ?? Infinity))
      f.seen.set(shownToken, { holder: shownHolder, op });
    push(f.shown, grantKey(shownHolder, shownToken), op);
  }
  return out;
}

/** Parses one entry, or returns why it is malformed. */
function parseEntry(e: unknown): Entry | string {
  if (e === null || typeof e !== 'object' || Array.isArray(e)) return 'not an object';
  const o = e as JsonObject;
  const holder = str(o, 'holder');
  const token = num(o, 'fencingToken');
  const grantedAtMs = num(o, 'grantedAtMs');
  if (holder === null || token === null || grantedAtMs === null)
    return 'holder, fencingToken and grantedAtMs are required';
  const endedAtMs = o['endedAtMs'] === null ? null : num(o, 'endedAtMs');
  const endReason = o['endReason'] === null ? null : str(o, 'endReason');
  if (endedAtMs === null && o['endedAtMs'] !== null) return 'endedAtMs is not a number or null';
  if (endReason === null && o['endReason'] !== null) return 'endReason is not a string or null';
  if ((endedAtMs === null) !== (endReason === null))
    return 'endedAtMs and endReason must be null together';
  return { holder, token, grantedAtMs, endedAtMs, endReason, shared: o['mode'] === 'shared' };
}

/** Parses the ok history reads; malformed answers become violations and are left out. */
function historyReads(ops: readonly HistoryOp[], violations: Violation[]): Read[] {
  const out: Read[] = [];
  for (const op of ops) {
    const v = okValue(op.outcome);
    const lease = str(op.args, 'name');
    if (op.kind !== 'lease.history' || v === null || lease === null || op.completeMs === null)
      continue;
    const grants = v['grants'];
    const entries: Entry[] = [];
    let bad: string | null = Array.isArray(grants) ? null : 'grants is not a list';
    for (const g of Array.isArray(grants) ? grants : []) {
      const e = parseEntry(g);
      if (typeof e === 'string') bad ??= e;
      else entries.push(e);
    }
    if (bad !== null) {
      violations.push(violation('history-malformed', op, `lease ${lease}: ${bad}`));
      continue;
    }
    out.push({ lease, op, entries, completeMs: op.completeMs });
  }
  return out;
}

function violation(property: string, op: HistoryOp, message: string, other?: HistoryOp): Violation {
  return {
    property,
    timeMs: op.completeMs ?? op.invokeMs,
    opIds: other === undefined ? [op.opId] : [op.opId, other.opId],
    message: `${message} (${describeOp(op)})`,
  };
}

/** The checks of one answer on its own (order, reasons, overlap). */
function answerViolations(r: Read): Violation[] {
  const out: Violation[] = [];
  const es = r.entries;
  const exclusive = es.every((e) => !e.shared);
  for (let i = 0; i < es.length; i++) {
    const e = es[i]!;
    const at = `lease ${r.lease} token ${e.token} (${e.holder})`;
    if (e.endReason !== null && !LEASE_END_REASONS.has(e.endReason))
      out.push(violation('history-end-reason', r.op, `${at}: end reason ${e.endReason}`));
    if (e.endedAtMs !== null && e.endedAtMs < e.grantedAtMs)
      out.push(violation('history-overlap', r.op, `${at} ended before it was granted`));
    const older = es[i + 1];
    if (older === undefined) continue;
    if (older.token >= e.token)
      out.push(
        violation(
          'history-order',
          r.op,
          `${at} listed before token ${older.token}: not newest first`,
        ),
      );
    else if (exclusive && older.endedAtMs === null)
      out.push(
        violation('history-overlap', r.op, `${at} listed while older ${older.token} is live`),
      );
    else if (exclusive && older.endedAtMs !== null && e.grantedAtMs < older.endedAtMs)
      out.push(
        violation(
          'history-overlap',
          r.op,
          `${at} granted at ${e.grantedAtMs} before token ${older.token} ended at ${older.endedAtMs}`,
        ),
      );
  }
  return out;
}

/** Why an ended entry's reason is not explained by the clients' requests, or null. */
function unexplainedEnd(e: Entry, f: LeaseFacts, readEndMs: number): string | null {
  const sentBefore = (op: HistoryOp): boolean => op.invokeMs < readEndMs;
  const acquires = f.acquires.get(e.holder) ?? [];
  switch (e.endReason) {
    case 'revoked':
      return f.revokes.some((op) => {
        const t = num(op.args, 'fencingToken');
        return sentBefore(op) && (t === null || t === e.token);
      })
        ? null
        : 'revoked, but no revoke of it was sent before the read ended';
    case 'released':
      return (f.releases.get(grantKey(e.holder, e.token)) ?? []).some(sentBefore)
        ? null
        : 'released, but its holder sent no release of it before the read ended';
    case 'max_hold':
      return acquires.some((op) => num(op.args, 'maxHoldMs') !== null)
        ? null
        : 'ended by max_hold, but no acquire asked for maxHoldMs';
    case 'session_ended':
      return acquires.some((op) => str(op.args, 'session') !== null)
        ? null
        : 'ended with its session, but no acquire named a session';
    default:
      return null;
  }
}

/** Why an `expired` entry could not have expired yet, or null. */
function earlyExpiry(e: Entry, f: LeaseFacts, readEndMs: number, drift: number): string | null {
  const ttlMin = f.ttlMin.get(e.holder);
  if (ttlMin !== undefined && e.endedAtMs !== null && e.endedAtMs - e.grantedAtMs < ttlMin)
    return `expired ${e.endedAtMs - e.grantedAtMs} ms (cluster time) after its grant, below ttlMs ${ttlMin}`;
  for (const ack of f.shown.get(grantKey(e.holder, e.token)) ?? []) {
    if (ack.kind === 'lease.get') continue;
    // A later acquire by the same holder may have re-armed it with a shorter ttl: use the shortest.
    const ttl = Math.min(
      num(okValue(ack.outcome), 'ttlMs') ?? num(ack.args, 'ttlMs') ?? Infinity,
      ttlMin ?? Infinity,
    );
    if (!Number.isFinite(ttl)) continue;
    const earliest = ack.invokeMs + ttl * (1 - drift);
    if (readEndMs < earliest)
      return `expired by ${readEndMs.toFixed(1)} ms, but ${describeOp(ack)} kept it until at least ${earliest.toFixed(1)} ms`;
  }
  return null;
}

/** Checks of one read's entries against the clients' requests and answers. */
function clientViolations(r: Read, f: LeaseFacts, drift: number): Violation[] {
  const out: Violation[] = [];
  const sentMs = r.op.invokeMs;
  for (const e of r.entries) {
    const at = `lease ${r.lease} token ${e.token} (${e.holder})`;
    const seen = f.seen.get(e.token);
    if (seen !== undefined && seen.holder !== e.holder)
      out.push(
        violation('history-holder-mismatch', r.op, `${at}: answered to ${seen.holder}`, seen.op),
      );
    if (!(f.acquires.get(e.holder) ?? []).some((op) => op.invokeMs < r.completeMs))
      out.push(violation('history-phantom-holder', r.op, `${at}: its holder never asked for it`));
    const why =
      unexplainedEnd(e, f, r.completeMs) ??
      (e.endReason === 'expired' ? earlyExpiry(e, f, r.completeMs, drift) : null);
    if (why !== null)
      out.push(
        violation(
          e.endReason === 'expired' ? 'history-early-expiry' : 'history-unexplained-end',
          r.op,
          `${at}: ${why}`,
        ),
      );
    const contradiction = endContradiction(e, f, r);
    if (contradiction !== null)
      out.push(
        violation('history-end-contradicted', r.op, `${at}: ${contradiction[0]}`, contradiction[1]),
      );
  }
  if (r.entries.length === 0 || r.entries.some((e) => e.shared)) return out;
  const oldest = r.entries[r.entries.length - 1]!.token;
  const listed = new Set(r.entries.map((e) => e.token));
  for (const [token, s] of f.seen) {
    if (token < oldest || listed.has(token) || s.op.completeMs === null) continue;
    if (s.op.completeMs < sentMs)
      out.push(
        violation(
          'history-missing-grant',
          r.op,
          `lease ${r.lease} token ${token} (${s.holder}) was answered before the read and is within its range, but not listed`,
          s.op,
        ),
      );
  }
  return out;
}

/** An acknowledged end before the read of a grant shown live, or a live answer after an end shown. */
function endContradiction(e: Entry, f: LeaseFacts, r: Read): [string, HistoryOp] | null {
  if (e.endReason === null) {
    for (const op of f.releases.get(grantKey(e.holder, e.token)) ?? [])
      if (op.outcome.status === 'ok' && op.completeMs !== null && op.completeMs < r.op.invokeMs)
        return ['shown live after its release was acknowledged', op];
    for (const op of f.revokes) {
      const list = okValue(op.outcome)?.['revoked'];
      if (
        Array.isArray(list) &&
        list.includes(e.token) &&
        op.completeMs !== null &&
        op.completeMs < r.op.invokeMs
      )
        return ['shown live after its revoke was acknowledged', op];
    }
    return null;
  }
  for (const op of f.shown.get(grantKey(e.holder, e.token)) ?? [])
    if (op.invokeMs > r.completeMs) return [`shown ${e.endReason}, then live again`, op];
  return null;
}

/** `history-rewritten`: reads sent after an earlier read of the same lease ended must agree with it. */
function rewrites(reads: readonly Read[]): Violation[] {
  const out: Violation[] = [];
  const byLease = new Map<string, Read[]>();
  for (const r of reads) push(byLease, r.lease, r);
  for (const list of byLease.values()) {
    const bySent = [...list].sort((a, b) => a.op.invokeMs - b.op.invokeMs);
    const byEnd = [...list].sort((a, b) => a.completeMs - b.completeMs);
    const known = new Map<number, { e: Entry; r: Read }>();
    let j = 0;
    for (const b of bySent) {
      while (j < byEnd.length && byEnd[j]!.completeMs < b.op.invokeMs) {
        const a = byEnd[j++]!;
        for (const e of a.entries) {
          const k = known.get(e.token);
          if (k === undefined || (k.e.endReason === null && e.endReason !== null))
            known.set(e.token, { e, r: a });
        }
      }
      if (b.entries.length === 0 || b.entries.some((e) => e.shared)) continue;
      const oldest = b.entries[b.entries.length - 1]!.token;
      const now = new Map(b.entries.map((e) => [e.token, e]));
      for (const [token, k] of known) {
        if (token < oldest) continue;
        const e = now.get(token);
        const changed =
          e === undefined
            ? 'omitted'
            : e.holder !== k.e.holder || e.grantedAtMs !== k.e.grantedAtMs
              ? `now ${e.holder} granted at ${e.grantedAtMs}`
              : k.e.endReason !== null &&
                  (e.endReason !== k.e.endReason || e.endedAtMs !== k.e.endedAtMs)
                ? `now ended ${e.endReason ?? 'never'} at ${e.endedAtMs ?? '-'}`
                : null;
        if (changed !== null)
          out.push(
            violation(
              'history-rewritten',
              b.op,
              `lease ${b.lease} token ${token}: an earlier read showed ${k.e.holder} granted at ${k.e.grantedAtMs}, ended ${k.e.endReason ?? '(live)'} at ${k.e.endedAtMs ?? '-'}; ${changed}`,
              k.r.op,
            ),
          );
      }
    }
  }
  return out;
}

/** Checks the ok history reads of a run (raw attempts; merged here) with drift `maxDriftRatio`. */
export function checkHolderHistory(
  rawOps: readonly HistoryOp[],
  maxDriftRatio: number,
): CheckResult {
  const ops = mergeAttempts(rawOps);
  const violations: Violation[] = [];
  const reads = historyReads(ops, violations);
  const facts = leaseFacts(ops);
  const linearizable = reads.filter((r) => str(r.op.args, 'consistency') !== 'stale');
  for (const r of reads) violations.push(...answerViolations(r));
  for (const r of linearizable) {
    const f = facts.get(r.lease);
    if (f !== undefined) violations.push(...clientViolations(r, f, maxDriftRatio));
  }
  violations.push(...rewrites(linearizable));
  const entries = reads.flatMap((r) => r.entries);
  return {
    ok: violations.length === 0,
    violations,
    stats: {
      historyReads: reads.length,
      entriesChecked: entries.length,
      endedExpired: entries.filter((e) => e.endReason === 'expired').length,
      endedReleased: entries.filter((e) => e.endReason === 'released').length,
      endedRevoked: entries.filter((e) => e.endReason === 'revoked').length,
    },
  };
}

/** The checker object (drift from the run's timing). */
export function holderHistoryChecker(): Checker {
  return {
    name: 'holder-history',
    check: (run: RunRecord) => checkHolderHistory(run.ops, run.timing.maxDriftRatio),
  };
}
