/**
 * Checker (f): liveness after faults heal (docs/api.md Deadlines and check-quorum; BC-20, BC-25).
 *
 * For every heal event, recovery time = first acknowledged write (2xx acquire/renew/release,
 * campaign/renew/resign/proclaim, KV put/delete) completing at or after the heal, minus the heal
 * time. Stats give recovery per fault kind (max and p50). `no-recovery` is a violation only for
 * the final heal (the moment from which no fault is active): the cluster must serve a write
 * within `recoveryMsMax` of it, provided the run went on for that long afterwards.
 */
import type {
  Checker,
  CheckResult,
  FaultEvent,
  HistoryOp,
  RunRecord,
  Violation,
} from '../types.js';
import { percentiles } from './history.js';

/** Options: the bound on recovery after the last heal (default 2 × max election timeout + 5 s). */
export interface LivenessOptions {
  readonly recoveryMsMax?: number;
}

const WRITES = new Set([
  'lease.acquire',
  'lease.renew',
  'lease.release',
  'election.campaign',
  'election.renew',
  'election.resign',
  'election.proclaim',
  'kv.put',
  'kv.delete',
]);

/** Checks recovery after heals. `durationMs` is the run's end on the run clock. */
export function checkLiveness(
  ops: readonly HistoryOp[],
  faults: readonly FaultEvent[],
  durationMs: number,
  recoveryMsMax: number,
): CheckResult {
  const violations: Violation[] = [];
  const acks = ops
    .filter((o) => WRITES.has(o.kind) && o.outcome.status === 'ok' && o.completeMs !== null)
    .map((o) => o.completeMs!)
    .sort((a, b) => a - b);
  const firstAckAfter = (t: number): number | null => {
    let lo = 0;
    let hi = acks.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (acks[mid]! < t) lo = mid + 1;
      else hi = mid;
    }
    return lo < acks.length ? acks[lo]! : null;
  };
  const sorted = [...faults].sort((a, b) => a.timeMs - b.timeMs);
  const active = new Set<number>();
  const perKind = new Map<string, number[]>();
  let finalHeal: FaultEvent | null = null;
  let unhealed = 0;
  for (const f of sorted) {
    if (f.action === 'inject') {
      active.add(f.faultId);
      finalHeal = null;
      continue;
    }
    active.delete(f.faultId);
    const ack = firstAckAfter(f.timeMs);
    if (ack !== null) {
      const l = perKind.get(f.kind) ?? [];
      l.push(ack - f.timeMs);
      perKind.set(f.kind, l);
    }
    if (active.size === 0) finalHeal = f;
  }
  unhealed = active.size;
  const stats: Record<string, number | string> = {
    heals: sorted.filter((f) => f.action === 'heal').length,
    unhealedFaults: unhealed,
    writesAcked: acks.length,
  };
  for (const [kind, l] of perKind) {
    const p = percentiles(l);
    stats[`recovery.${kind}.p50Ms`] = Math.round(p.p50!);
    stats[`recovery.${kind}.maxMs`] = Math.round(p.max!);
  }
  if (finalHeal !== null) {
    const ack = firstAckAfter(finalHeal.timeMs);
    stats['finalRecoveryMs'] = ack === null ? 'none' : Math.round(ack - finalHeal.timeMs);
    if (
      (ack === null && durationMs - finalHeal.timeMs >= recoveryMsMax) ||
      (ack !== null && ack - finalHeal.timeMs > recoveryMsMax)
    ) {
      violations.push({
        property: 'no-recovery',
        timeMs: finalHeal.timeMs,
        message: `after the last heal (${finalHeal.kind} ${finalHeal.detail} at ${finalHeal.timeMs.toFixed(0)} ms) ${ack === null ? `no write was acknowledged in the remaining ${(durationMs - finalHeal.timeMs).toFixed(0)} ms` : `the first write was acknowledged only after ${(ack - finalHeal.timeMs).toFixed(0)} ms`} (bound ${recoveryMsMax} ms)`,
      });
    }
  }
  return { ok: violations.length === 0, violations, stats };
}

/** The checker object. */
export function livenessChecker(options: LivenessOptions = {}): Checker {
  return {
    name: 'liveness',
    check: (run: RunRecord) =>
      checkLiveness(
        run.ops,
        run.faults,
        run.durationMs,
        options.recoveryMsMax ?? 2 * run.timing.electionTimeoutMaxMs + 5000,
      ),
  };
}
