/**
 * Recounts the per-owner live counts from the records (docs/security.md, quotas): used on restore
 * (the counts are derived state, not in the snapshot) and by the invariant check.
 */
import type { Core } from './core.js';
import { OwnerCounts } from './ownership.js';

/** Counts of live lease grants, sessions and queued waiters (leases and semaphores) per owner. */
export function recountOwners(core: Core): OwnerCounts {
  const counts = new OwnerCounts();
  for (const rec of core.leases.values()) {
    if (rec.grant !== null) counts.add(rec.grant.owner, 'leases', 1);
    for (const g of rec.shared?.values() ?? []) counts.add(g.owner, 'leases', 1);
  }
  for (const w of core.pendingWaiters.values()) counts.add(w.owner, 'waiters', 1);
  for (const w of core.pendingSemWaiters.values()) counts.add(w.owner, 'waiters', 1);
  for (const s of core.sessions.values()) counts.add(s.owner, 'sessions', 1);
  return counts;
}
