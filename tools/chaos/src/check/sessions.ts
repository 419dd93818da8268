/**
 * Checker: sessions (docs/primitives.md "Sessions", docs/api.md "Sessions"): every grant bound to
 * a session ends no later than the session, in the same log entry.
 *
 * From the requests (session facts of grant-spans.ts: a session is certainly over by the ack of an
 * ok DELETE or of a 404 to its keepalive/GET/DELETE):
 * - `session-grant-outlived`: an op sent after that shows a grant bound to the session still live
 *   (an ok renew of it, or an ok KV write fenced by its token);
 * - `session-revived`: an ok keepalive sent after it.
 * From the watch iterators (watch.ts streams), where a grant's `granted` change names its session:
 * - `session-grants-split`: a session's grants did not all end in the revision in which one of them
 *   ended with `session_ended` (a grant of it granted earlier in the same iterator and not ended yet);
 * - `session-grant-after-end`: a grant bound to a session granted after that revision.
 */
import type {
  Checker,
  CheckResult,
  HistoryOp,
  JsonObject,
  RunRecord,
  Violation,
} from '../types.js';
import { describeOp, effectOf, num, str } from './history.js';
import {
  primitiveOps,
  sessionFacts,
  writeFence,
  grantSpans,
  type GrantSpan,
} from './grant-spans.js';
import { watchStreams, type WatchStream } from './watch.js';

const END_TYPES = new Set(['released', 'expired', 'revoked', 'session_ended', 'resigned']);

/** Violations of the same-entry rule in one watch iterator. */
export function sessionStreamViolations(s: WatchStream): Violation[] {
  const out: Violation[] = [];
  const live = new Map<string, { session: string; event: JsonObject; opId: number }>();
  const endedAt = new Map<string, number>();
  let pending: { session: string; revision: number; opId: number }[] = [];
  const flush = (): void => {
    for (const p of pending)
      for (const [k, g] of live)
        if (g.session === p.session)
          out.push({
            property: 'session-grants-split',
            opIds: [p.opId, g.opId],
            message: `watch ${s.watcher}#${s.stream}: session ${p.session} ended at revision ${p.revision}, but its grant ${k} (granted ${JSON.stringify(g.event)}) did not end in that revision`,
          });
    pending = [];
  };
  let current = -1;
  for (const { opId, event } of s.events) {
    const rev = num(event, 'revision');
    if (rev === null) continue;
    if (rev !== current) flush();
    current = rev;
    const kind = str(event, 'kind');
    if (kind !== 'lease' && kind !== 'semaphore') continue;
    const key = `${kind}:${str(event, 'name')}#${num(event, 'fencingToken')}`;
    const type = str(event, 'type') ?? '';
    if (type === 'granted') {
      const session = str(event, 'session');
      if (session === null) continue;
      const end = endedAt.get(session);
      if (end !== undefined && rev > end)
        out.push({
          property: 'session-grant-after-end',
          opIds: [opId],
          message: `watch ${s.watcher}#${s.stream}: ${key} granted at revision ${rev} bound to session ${session}, which ended at revision ${end}`,
        });
      live.set(key, { session, event, opId });
    } else if (END_TYPES.has(type)) {
      const g = live.get(key);
      live.delete(key);
      // The end names its session too (a grant granted before this iterator started).
      const session = g?.session ?? str(event, 'session');
      if (type === 'session_ended' && session !== null && !endedAt.has(session)) {
        endedAt.set(session, rev);
        pending.push({ session, revision: rev, opId });
      }
    }
  }
  flush();
  return out;
}

/** Ops sent after `endedByMs` that show `g` live. */
function outliving(ops: readonly HistoryOp[], g: GrantSpan, endedByMs: number): HistoryOp[] {
  return ops.filter((op) => {
    if (op.invokeMs <= endedByMs || effectOf(op.outcome) !== 'ok') return false;
    if (op.kind === `${g.family}.renew`)
      return (
        str(op.args, 'name') === g.name &&
        str(op.args, 'holder') === g.holder &&
        num(op.args, 'fencingToken') === g.token
      );
    if (op.kind !== 'prim.write') return false;
    const f = writeFence(op);
    return f !== null && f.family === g.family && f.name === g.name && f.token === g.token;
  });
}

/** Checks the run's sessions. */
export function checkSessions(raw: readonly HistoryOp[], drift: number): CheckResult {
  const ops = primitiveOps(raw);
  const sessions = sessionFacts(ops, drift);
  const violations: Violation[] = [];
  const bound = [
    ...grantSpans(ops, 'sem', sessions, drift),
    ...grantSpans(ops, 'rw', sessions, drift),
  ].filter((g) => g.session !== null);
  for (const g of bound) {
    const s = sessions.get(g.session!);
    if (s?.endedByMs === null || s === undefined) continue;
    for (const op of outliving(ops, g, s.endedByMs))
      violations.push({
        property: 'session-grant-outlived',
        opIds: [s.evidenceOpId ?? op.opId, op.opId],
        message: `${g.name}: ${g.holder}'s token ${g.token} bound to session ${s.sessionId}, over by ${s.endedByMs.toFixed(0)} ms, still live for ${describeOp(op)}`,
      });
  }
  for (const op of ops) {
    const id = str(op.args, 'sessionId');
    const s = id === null ? undefined : sessions.get(id);
    if (op.kind !== 'session.keepalive' || s?.endedByMs === null || s === undefined) continue;
    if (effectOf(op.outcome) === 'ok' && op.invokeMs > s.endedByMs)
      violations.push({
        property: 'session-revived',
        opIds: [op.opId],
        message: `session ${s.sessionId} over by ${s.endedByMs.toFixed(0)} ms, kept alive by ${describeOp(op)}`,
      });
  }
  let streamEnds = 0;
  for (const st of watchStreams(raw)) {
    streamEnds += st.events.filter((e) => str(e.event, 'type') === 'session_ended').length;
    violations.push(...sessionStreamViolations(st));
  }
  return {
    ok: violations.length === 0,
    violations,
    stats: {
      sessions: sessions.size,
      sessionsEndSeen: [...sessions.values()].filter((s) => s.endedByMs !== null).length,
      boundGrants: bound.length,
      sessionEndedChangesWatched: streamEnds,
    },
  };
}

/** The checker object. */
export function sessionsChecker(): Checker {
  return {
    name: 'sessions',
    check: (run: RunRecord) => checkSessions(run.ops, run.timing.maxDriftRatio),
  };
}
