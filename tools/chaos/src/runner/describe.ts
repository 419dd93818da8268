/** One-line descriptions of fault plans for progress output. */
import type { FaultPlan } from '../faults/index.js';
import type { NodeTarget } from '../faults/fault.js';
import { describeNetem } from '../faults/netem.js';

const target = (t: NodeTarget | 'all'): string => (typeof t === 'object' ? t.node : t);

/** E.g. `pause leader for 3.9 s`. */
export function describePlan(plan: FaultPlan): string {
  const hold = `for ${(plan.holdMs / 1000).toFixed(1)} s`;
  switch (plan.kind) {
    case 'crash':
      return `crash ${target(plan.params.target)}, restart after ${(plan.holdMs / 1000).toFixed(1)} s`;
    case 'pause':
      return `pause ${target(plan.params.target)} ${hold}`;
    case 'partition': {
      const p = plan.params;
      const what =
        p.shape === 'client-cut'
          ? `client-cut ${p.clients.join(',')}`
          : p.shape === 'split'
            ? `split minority ${target(p.minority)}`
            : `${p.shape}${p.shape === 'isolate' && p.peerOnly ? ' (peer-only)' : ''} ${target(p.target)}`;
      return `partition ${what} ${hold}`;
    }
    case 'netem':
      return `netem ${describeNetem(plan.params.spec)} on ${target(plan.params.target)} ${hold}`;
    case 'clock':
      return plan.params.mode === 'rate'
        ? `clock rate x${plan.params.rate} on ${target(plan.params.target)} ${hold}`
        : `wall clock ${plan.params.offsetSeconds}s on ${target(plan.params.target)} ${hold}`;
    case 'restart-all':
      return `kill all nodes, restart after ${(plan.holdMs / 1000).toFixed(1)} s`;
    case 'rolling-restart':
      return `rolling restart (down ${plan.params.downMs} ms each)`;
    case 'membership':
      return `replace ${target(plan.params.target)} (${plan.params.removal === 'lost-disk' ? 'SIGKILL, ' : 'live, '}remove, wipe), rejoin after ${(plan.holdMs / 1000).toFixed(1)} s`;
  }
}
