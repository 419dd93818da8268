/**
 * Cluster context of a violation, for its message: which node led in which term over a window
 * (from the leader samples: a reachable node claiming itself leader) and which faults overlapped
 * the window or ended shortly before it. Used by lease-timing and linearizability so that, e.g.,
 * an early expiry shows the grant's leader/term and the pause of a former leader a few seconds
 * earlier (the chaos slice of 2026-11-29: a leader paused 30.7–37.1 s led again at 38.7 s and
 * granted early at 40.7 s).
 */
import type { FaultEvent, LeaderSample } from '../types.js';

/** How far before a window faults are still listed, ms (a fault's effect can outlive its heal). */
export const contextLookbackMs = 10_000;

/** One leadership stretch seen in the samples. */
export interface LeaderStretch {
  readonly leader: string;
  readonly term: number | null;
  readonly fromMs: number;
  readonly toMs: number;
}

/** Leadership stretches (self-claims of reachable nodes) overlapping [fromMs, toMs], in time order. */
export function leadersDuring(
  samples: readonly LeaderSample[],
  fromMs: number,
  toMs: number,
): LeaderStretch[] {
  const claims = samples
    .filter((s) => s.reachable && s.leader !== null && s.leader === s.node)
    .sort((a, b) => a.timeMs - b.timeMs);
  const stretches: { leader: string; term: number | null; fromMs: number; toMs: number }[] = [];
  for (const c of claims) {
    const last = stretches[stretches.length - 1];
    if (last !== undefined && last.leader === c.node && last.term === c.term) last.toMs = c.timeMs;
    else stretches.push({ leader: c.node, term: c.term, fromMs: c.timeMs, toMs: c.timeMs });
  }
  return stretches.filter((s) => s.toMs >= fromMs - 500 && s.fromMs <= toMs + 500);
}

/** The leader (self-claim) sampled last at or before `timeMs`, or null. */
export function leaderAt(
  samples: readonly LeaderSample[],
  timeMs: number,
): { leader: string; term: number | null; sampledMs: number } | null {
  let best: LeaderSample | null = null;
  for (const s of samples) {
    if (s.timeMs > timeMs || !s.reachable || s.leader === null || s.leader !== s.node) continue;
    if (best === null || s.timeMs > best.timeMs) best = s;
  }
  return best === null ? null : { leader: best.node, term: best.term, sampledMs: best.timeMs };
}

/** Faults (inject→heal, or still active) overlapping [fromMs − lookbackMs, toMs], described. */
export function faultsNear(
  faults: readonly FaultEvent[],
  fromMs: number,
  toMs: number,
  lookbackMs = contextLookbackMs,
): string[] {
  const out: string[] = [];
  for (const inj of faults.filter((f) => f.action === 'inject')) {
    const heal = faults.find(
      (f) => f.action === 'heal' && f.faultId === inj.faultId && f.timeMs >= inj.timeMs,
    );
    const endMs = heal?.timeMs ?? Infinity;
    if (inj.timeMs <= toMs && endMs >= fromMs - lookbackMs) {
      out.push(
        `${inj.kind} [${s(inj.timeMs)}–${heal === undefined ? 'end' : s(endMs)}] ${inj.detail}`,
      );
    }
  }
  return out;
}

function s(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}

/** One line: leaders/terms over the window and nearby faults. */
export function describeContext(
  samples: readonly LeaderSample[],
  faults: readonly FaultEvent[],
  fromMs: number,
  toMs: number,
): string {
  const leaders = leadersDuring(samples, fromMs, toMs).map(
    (l) => `${l.leader}@t${l.term ?? '?'} ${s(l.fromMs)}–${s(l.toMs)}`,
  );
  const near = faultsNear(faults, fromMs, toMs);
  return `[context ${s(fromMs)}–${s(toMs)}: leaders ${leaders.length > 0 ? leaders.join(', ') : 'none sampled'}; faults from ${s(Math.max(0, fromMs - contextLookbackMs))}: ${near.length > 0 ? near.join('; ') : 'none'}]`;
}
