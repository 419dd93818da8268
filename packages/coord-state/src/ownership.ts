/**
 * Grant ownership and per-token caps (docs/security.md, "Tokens, roles and ownership").
 *
 * With auth on, every grant, waiter, candidacy, permit and session records the name of the token
 * that took it (`owner`). A command from another token that names it is refused with `forbidden`
 * whatever holder or fencing token it sends; operator revoke and expiry never look at owners (an
 * auth problem never keeps a grant alive). Commands without a principal (auth off, or the server
 * itself) are never refused here. Live lease grants, sessions and queued waiters are counted per
 * owner so a token's caps are checked in O(1).
 */
import assert from 'node:assert';
import type { CommandResult } from './api.js';
import type { Principal } from './auth.js';
import { exhausted, fail } from './fail.js';
import type { ApplyContext } from './model.js';

/** The quantities a token's caps bound. */
export type OwnedCount = 'leases' | 'sessions' | 'waiters';

const CAP_FIELD: Readonly<Record<OwnedCount, 'leasesMax' | 'sessionsMax' | 'waitersMax'>> = {
  leases: 'leasesMax',
  sessions: 'sessionsMax',
  waiters: 'waitersMax',
};

/** Owner of what the entry being applied creates: its principal's token, or null. */
export function ownerFor(ctx: ApplyContext): string | null {
  return ctx.principal?.token ?? null;
}

/**
 * `forbidden` when the entry's principal is not `owner` (a recorded owner only: grants taken with
 * auth off, and commands without a principal, pass). `what` names the grant for the message. The
 * owner's token name is not in the answer: token names are shown to admins only
 * (docs/security.md).
 */
export function refuseOther(
  ctx: ApplyContext,
  owner: string | null,
  what: string,
): CommandResult<never> | null {
  const p = ctx.principal ?? null;
  if (p === null || owner === null || owner === p.token) return null;
  return fail(
    'forbidden',
    `${what} was taken by another token: only that token may renew, release, resign or proclaim with it (an admin may revoke it)`,
  );
}

/** Live counts per owner token (owners with nothing live are not kept). */
export class OwnerCounts {
  readonly #byOwner = new Map<string, Record<OwnedCount, number>>();

  /** Adds `delta` (±1) to `owner`'s count of `what`; null owners are not counted. */
  add(owner: string | null, what: OwnedCount, delta: 1 | -1): void {
    if (owner === null) return;
    let c = this.#byOwner.get(owner);
    if (c === undefined) {
      c = { leases: 0, sessions: 0, waiters: 0 };
      this.#byOwner.set(owner, c);
    }
    c[what] += delta;
    assert(c[what] >= 0, `ownership: ${owner} ${what} count below zero`);
    if (c.leases === 0 && c.sessions === 0 && c.waiters === 0) this.#byOwner.delete(owner);
  }

  /** `owner`'s live count of `what` (0 when unknown). */
  get(owner: string, what: OwnedCount): number {
    return this.#byOwner.get(owner)?.[what] ?? 0;
  }

  /** Every owner's counts, sorted by owner (for invariant checks). */
  entries(): [string, Record<OwnedCount, number>][] {
    return [...this.#byOwner.entries()]
      .map(([k, v]): [string, Record<OwnedCount, number>] => [k, { ...v }])
      .sort((a, b) => (a[0] < b[0] ? -1 : 1));
  }
}

/**
 * `resource_exhausted` when one more `what` would pass the principal's cap (docs/security.md,
 * quotas); null when allowed or when there is no principal or no cap.
 */
export function overCap(
  principal: Principal | null | undefined,
  counts: OwnerCounts,
  what: OwnedCount,
): CommandResult<never> | null {
  if (principal === null || principal === undefined) return null;
  const field = CAP_FIELD[what];
  const cap = principal[field];
  if (cap === null || counts.get(principal.token, what) < cap) return null;
  return exhausted(`quota.${field}`, cap, ` for token ${principal.token}`);
}
