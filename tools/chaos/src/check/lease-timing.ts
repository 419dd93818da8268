/**
 * Checker (d): lease timing (docs/concepts.md, §2; BC-03, BC-05, BC-18, BC-28).
 *
 * - `early-expiry`: for consecutive observed grants t1 < t2 of one resource (lease or election
 *   group), if t1 was not (possibly) released/resigned/revoked (docs/api.md Operator revoke: a revoke
 *   naming t1 or no token) before t2 was first seen, then t2's first
 *   evidence (earliest completion of an op showing it) must be ≥ send time of t1's last acked
 *   acquire/renew (campaign/renew for elections) + ttlMs × (1 − maxDriftRatio).
 * - `late-expiry` (leases only): a grant that was never released and whose holder sent no renew of
 *   unknown outcome must not still be seen held (a linearizable read invoked at X showing it) when
 *   X > ack of its last renew + ttlMs + Δmax + leaderless time in between. Leaderless time is where
 *   no reachable node claims leadership in the leader samples (leases are frozen then, §1.5). When a
 *   partition, pause or netem fault overlaps the window the lateness is reported
 *   (`lateUnderFaults`), not failed, unless `strictUnderFaults`.
 * - stats: the lateness distribution of abandoned grants (first evidence of the lease being free or
 *   re-granted, minus send time + ttlMs), p50/p90/p99/max, and the least margin seen before an
 *   expiry (`earlyMarginMinMs`).
 */
import type {
  Checker,
  CheckResult,
  FaultEvent,
  HistoryOp,
  LeaderSample,
  RunRecord,
  RunTiming,
  Violation,
} from '../types.js';
import { effectOf, num, obj, okValue, percentiles, str, describeOp } from './history.js';
import { mergeAttempts } from './merge.js';
import { tokenObservations, type TokenObservation } from './fencing.js';
import { describeContext, leaderAt } from './context.js';

/** Options: run timing (drift, Δmax) and whether lateness under partitions fails. */
export interface LeaseTimingOptions {
  readonly timing: RunTiming;
  readonly strictUnderFaults?: boolean;
}

/** Milliseconds in [fromMs, toMs] with no leader (no reachable self-claimed leader within 300 ms). */
export function leaderlessMs(
  samples: readonly LeaderSample[],
  fromMs: number,
  toMs: number,
): number {
  if (samples.length === 0 || toMs <= fromMs) return 0;
  const claims = samples
    .filter((s) => s.reachable)
    .map((s) => ({ t: s.timeMs, leader: s.leader !== null && s.leader === s.node }))
    .sort((a, b) => a.t - b.t);
  const stepMs = 100;
  const windowMs = 300;
  let lo = 0;
  let leaderless = 0;
  for (let tau = fromMs; tau < toMs; tau += stepMs) {
    while (lo < claims.length && claims[lo]!.t < tau - windowMs) lo++;
    let present = false;
    for (let i = lo; i < claims.length && claims[i]!.t <= tau; i++)
      if (claims[i]!.leader) {
        present = true;
        break;
      }
    if (!present) leaderless += Math.min(stepMs, toMs - tau);
  }
  return leaderless;
}

const EXCUSING_FAULTS = new Set(['partition', 'pause', 'netem']);

/** Fault kinds active at some point of [fromMs, toMs] (inject before toMs, heal after fromMs or never). */
export function faultsDuring(
  faults: readonly FaultEvent[],
  fromMs: number,
  toMs: number,
): string[] {
  const injected = new Map<number, FaultEvent>();
  const out = new Set<string>();
  for (const f of [...faults].sort((a, b) => a.timeMs - b.timeMs)) {
    if (f.action === 'inject') {
      injected.set(f.faultId, f);
      continue;
    }
    const inj = injected.get(f.faultId);
    injected.delete(f.faultId);
    if (inj !== undefined && inj.timeMs < toMs && f.timeMs > fromMs) out.add(inj.kind);
  }
  for (const inj of injected.values()) if (inj.timeMs < toMs) out.add(inj.kind);
  return [...out];
}

interface GrantFacts {
  readonly resource: string;
  readonly token: number;
  holder: string | null;
  firstEvidenceMs: number;
  firstObsInvokeMs: number;
  lastObsInvoke: TokenObservation | null;
}

function resourceOf(op: HistoryOp): string | null {
  if (op.kind.startsWith('lease.')) {
    const n = str(op.args, 'name');
    return n === null ? null : `lease:${n}`;
  }
  if (op.kind.startsWith('election.')) {
    const g = str(op.args, 'group');
    return g === null ? null : `election:${g}`;
  }
  return null;
}

/** "renew under n1@t4, grant by n2@t5": the sampled leader when the renew was sent and when the next grant was first seen. */
function describeLeaders(
  samples: readonly LeaderSample[],
  renewMs: number,
  grantMs: number,
): string {
  const at = (t: number): string => {
    const l = leaderAt(samples, t);
    return l === null
      ? 'no leader sampled'
      : `${l.leader}@t${l.term ?? '?'} (sampled ${(l.sampledMs / 1000).toFixed(2)}s)`;
  };
  return `leader at renew: ${at(renewMs)}, at grant: ${at(grantMs)}`;
}

/** Checks the merged history against the timing rules. */
export function checkLeaseTiming(
  rawOps: readonly HistoryOp[],
  samples: readonly LeaderSample[],
  faults: readonly FaultEvent[],
  options: LeaseTimingOptions,
): CheckResult {
  const ops = mergeAttempts(rawOps);
  const drift = options.timing.maxDriftRatio;
  const violations: Violation[] = [];
  const grants = new Map<string, Map<number, GrantFacts>>();
  for (const o of tokenObservations(ops)) {
    if (o.op.completeMs === null) continue;
    let m = grants.get(o.resource);
    if (m === undefined) {
      m = new Map();
      grants.set(o.resource, m);
    }
    let g = m.get(o.token);
    if (g === undefined) {
      g = {
        resource: o.resource,
        token: o.token,
        holder: o.holder,
        firstEvidenceMs: Infinity,
        firstObsInvokeMs: Infinity,
        lastObsInvoke: null,
      };
      m.set(o.token, g);
    }
    g.holder ??= o.holder;
    g.firstEvidenceMs = Math.min(g.firstEvidenceMs, o.op.completeMs);
    g.firstObsInvokeMs = Math.min(g.firstObsInvokeMs, o.op.invokeMs);
    // Stale reads (`?consistency=stale`) may lag: they date nothing here (linearizability judges them).
    if (
      (o.op.kind.endsWith('.get') || o.op.kind === 'fence.check') &&
      str(o.op.args, 'consistency') !== 'stale'
    ) {
      if (g.lastObsInvoke === null || o.op.invokeMs > g.lastObsInvoke.op.invokeMs)
        g.lastObsInvoke = o;
    }
  }
  const byRes = new Map<string, HistoryOp[]>();
  for (const op of ops) {
    const r = resourceOf(op);
    if (r === null) continue;
    const l = byRes.get(r);
    if (l === undefined) byRes.set(r, [op]);
    else l.push(op);
  }

  let pairsChecked = 0;
  let earlyMarginMin = Infinity;
  const lateness: number[] = [];
  const lateUnderFaults: string[] = [];
  for (const [res, m] of grants) {
    const resOps = byRes.get(res) ?? [];
    const tokens = [...m.keys()].sort((a, b) => a - b);
    for (let i = 0; i < tokens.length; i++) {
      const g1 = m.get(tokens[i]!)!;
      const g2 = i + 1 < tokens.length ? m.get(tokens[i + 1]!)! : null;
      const horizon = g2?.firstEvidenceMs ?? Infinity;
      if (g1.holder === null) continue;
      const isLease = res.startsWith('lease:');
      const ended = resOps.some(
        (op) =>
          endsGrant(op, g1, isLease) &&
          op.invokeMs < horizon &&
          (op.completeMs === null ||
            effectOf(op.outcome) === 'maybe' ||
            op.completeMs >= g1.firstObsInvokeMs),
      );
      const base = lastAcked(resOps, g1, isLease, horizon, drift);
      if (g2 !== null && !ended && base !== null) {
        pairsChecked++;
        const earliest = base.earliestMs;
        earlyMarginMin = Math.min(earlyMarginMin, g2.firstEvidenceMs - earliest);
        if (g2.firstEvidenceMs < earliest) {
          violations.push({
            property: 'early-expiry',
            timeMs: g2.firstEvidenceMs,
            opIds: [base.op.opId],
            message: `${res}: token ${g2.token}${g2.holder === null ? '' : ` (${g2.holder})`} seen at ${g2.firstEvidenceMs.toFixed(1)} ms, ${(earliest - g2.firstEvidenceMs).toFixed(0)} ms early: ${g1.holder}'s token ${g1.token} was acquired/renewed at ${base.sendMs.toFixed(1)} ms with ttlMs ${base.ttlMs}: it could not expire before ${earliest.toFixed(1)} ms (last renew ${describeOp(base.op)}); ${describeLeaders(samples, base.sendMs, g2.firstEvidenceMs)} ${describeContext(samples, faults, base.sendMs, g2.firstEvidenceMs)}`,
            details: {
              earlyByMs: Math.round(earliest - g2.firstEvidenceMs),
              renewSentMs: base.sendMs,
              earliestExpiryMs: earliest,
              grantSeenMs: g2.firstEvidenceMs,
              previousToken: g1.token,
              token: g2.token,
            },
          });
        }
      }
      if (!isLease || ended || base === null) continue;
      if (
        resOps.some(
          (op) =>
            str(op.args, 'holder') === g1.holder &&
            (op.kind === 'lease.acquire' || op.kind === 'lease.renew') &&
            effectOf(op.outcome) === 'maybe',
        )
      )
        continue;
      const lastAck = lastAckedComplete(resOps, g1);
      const seen = g1.lastObsInvoke;
      if (seen !== null && lastAck !== null) {
        const allowed =
          lastAck +
          base.ttlMs +
          options.timing.expiryLatenessMaxMs +
          leaderlessMs(samples, lastAck, seen.op.invokeMs);
        if (seen.op.invokeMs > allowed) {
          const active = faultsDuring(faults, lastAck, seen.op.invokeMs).filter((k) =>
            EXCUSING_FAULTS.has(k),
          );
          const msg = `${res}: ${g1.holder}'s token ${g1.token} (last renew acked at ${lastAck.toFixed(1)} ms, ttlMs ${base.ttlMs}) still held at ${seen.op.invokeMs.toFixed(1)} ms, past ${allowed.toFixed(1)} ms (${describeOp(seen.op)}) ${describeContext(samples, faults, lastAck, seen.op.invokeMs)}`;
          if (active.length > 0 && options.strictUnderFaults !== true)
            lateUnderFaults.push(`${msg} [faults: ${active.join(',')}]`);
          else
            violations.push({
              property: 'late-expiry',
              timeMs: seen.op.invokeMs,
              opIds: [seen.op.opId],
              message: msg,
            });
        }
      }
      const freeAt = freeEvidence(resOps, lastAck, horizon);
      if (freeAt !== null) lateness.push(freeAt - (base.sendMs + base.ttlMs));
    }
  }
  const p = percentiles(lateness);
  return {
    ok: violations.length === 0,
    violations,
    stats: {
      grantPairsChecked: pairsChecked,
      earlyMarginMinMs: Number.isFinite(earlyMarginMin) ? Math.round(earlyMarginMin) : 'n/a',
      abandonedMeasured: lateness.length,
      latenessP50Ms: p.p50 === null ? 'n/a' : Math.round(p.p50),
      latenessP90Ms: p.p90 === null ? 'n/a' : Math.round(p.p90),
      latenessP99Ms: p.p99 === null ? 'n/a' : Math.round(p.p99),
      latenessMaxMs: p.max === null ? 'n/a' : Math.round(p.max),
      lateUnderFaults: lateUnderFaults.length,
      lateUnderFaultsDetail: lateUnderFaults.slice(0, 3).join(' | '),
    },
  };
}

/**
 * True when `op` may have ended grant `g` before its time: a release of its token, an operator
 * revoke of its token or of every live grant (docs/api.md Operator revoke), a resign of its candidate.
 */
function endsGrant(op: HistoryOp, g: GrantFacts, isLease: boolean): boolean {
  if (effectOf(op.outcome) === 'fail') return false;
  if (isLease && op.kind === 'lease.revoke') {
    const t = num(op.args, 'fencingToken');
    return t === null || t === g.token;
  }
  if (isLease)
    return (
      op.kind === 'lease.release' &&
      str(op.args, 'holder') === g.holder &&
      num(op.args, 'fencingToken') === g.token
    );
  return op.kind === 'election.resign' && str(op.args, 'candidate') === g.holder;
}

/**
 * The last acked acquire/renew (campaign/renew) of `g` sent before `horizonMs`, and the earliest
 * moment `g` may lapse: min over that op and every later request of the same holder that may have
 * re-armed the grant with a shorter ttl (acquire/campaign of any non-refused outcome) of
 * send time + ttlMs × (1 − drift). For elections the ttl is the shortest any campaign asked for.
 */
function lastAcked(
  ops: readonly HistoryOp[],
  g: GrantFacts,
  isLease: boolean,
  horizonMs: number,
  drift: number,
): { sendMs: number; ttlMs: number; earliestMs: number; op: HistoryOp } | null {
  let best: { sendMs: number; ttlMs: number; op: HistoryOp } | null = null;
  let campaignTtl: number | null = null;
  const mine = ops.filter(
    (op) =>
      op.invokeMs < horizonMs &&
      effectOf(op.outcome) !== 'fail' &&
      (isLease
        ? str(op.args, 'holder') === g.holder &&
          (op.kind === 'lease.acquire' || op.kind === 'lease.renew')
        : str(op.args, 'candidate') === g.holder &&
          (op.kind === 'election.campaign' || op.kind === 'election.renew')),
  );
  for (const op of mine) {
    if (!isLease && op.kind === 'election.campaign' && num(op.args, 'ttlMs') !== null)
      campaignTtl = Math.min(campaignTtl ?? Infinity, num(op.args, 'ttlMs')!);
  }
  for (const op of mine) {
    const v = okValue(op.outcome);
    if (v === null) continue;
    let ttl: number | null;
    if (isLease) {
      if (str(v, 'holder') !== g.holder || num(v, 'fencingToken') !== g.token) continue;
      ttl = num(v, 'ttlMs') ?? num(op.args, 'ttlMs');
    } else {
      // Only answers that show this candidate leading under this very token date this grant.
      if (
        v['elected'] !== true ||
        (num(v, 'fencingToken') ?? num(obj(v, 'leader'), 'fencingToken')) !== g.token
      )
        continue;
      ttl = campaignTtl;
    }
    if (ttl === null) continue;
    if (best === null || op.invokeMs > best.sendMs) best = { sendMs: op.invokeMs, ttlMs: ttl, op };
  }
  if (best === null) return null;
  let earliestMs = best.sendMs + best.ttlMs * (1 - drift);
  for (const op of mine) {
    // Any request that may have been applied after `best` (a concurrent or unknown one, too) may have re-armed it.
    const mayFollow =
      effectOf(op.outcome) === 'maybe' || op.completeMs === null || op.completeMs > best.sendMs;
    if (op === best.op || !mayFollow) continue;
    const ttl = isLease
      ? (num(okValue(op.outcome), 'ttlMs') ?? num(op.args, 'ttlMs') ?? best.ttlMs)
      : (campaignTtl ?? best.ttlMs);
    earliestMs = Math.min(earliestMs, Math.max(op.invokeMs, best.sendMs) + ttl * (1 - drift));
  }
  return { ...best, earliestMs };
}

/** Latest ack (completion) of an ok acquire/renew of lease grant `g`. */
function lastAckedComplete(ops: readonly HistoryOp[], g: GrantFacts): number | null {
  let t: number | null = null;
  for (const op of ops) {
    const v = okValue(op.outcome);
    if (
      v === null ||
      op.completeMs === null ||
      (op.kind !== 'lease.acquire' && op.kind !== 'lease.renew')
    )
      continue;
    if (str(v, 'holder') !== g.holder || num(v, 'fencingToken') !== g.token) continue;
    t = Math.max(t ?? -Infinity, op.completeMs);
  }
  return t;
}

/** Earliest completion of an op proving `g` ended: a later token's first evidence or a 404 read after its last ack. */
function freeEvidence(
  ops: readonly HistoryOp[],
  lastAck: number | null,
  horizonMs: number,
): number | null {
  let t = Number.isFinite(horizonMs) ? horizonMs : Infinity;
  if (lastAck !== null) {
    for (const op of ops) {
      if (
        op.kind === 'lease.get' &&
        op.outcome.status === 'fail' &&
        op.outcome.code === 'not_found' &&
        op.invokeMs > lastAck &&
        op.completeMs !== null
      )
        t = Math.min(t, op.completeMs);
    }
  }
  return Number.isFinite(t) ? t : null;
}

/** The checker object. */
export function leaseTimingChecker(options: LeaseTimingOptions): Checker {
  return {
    name: 'lease-timing',
    check: (run: RunRecord) =>
      checkLeaseTiming(run.ops, run.leaderSamples, run.faults, { ...options, timing: run.timing }),
  };
}
