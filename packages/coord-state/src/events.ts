/**
 * Change events (docs/api.md, streaming watch): every handler pushes what it changed onto the
 * entry's `ctx.events`, in the order it happens, so the server can build its event log from
 * `apply`'s output without diffing state. This file holds the shared mapping rules.
 */
import type { ChangeType, GrantEndReason } from './api.js';

/** The watch event type of a grant that ended for `reason` (max_hold reads as `expired`). */
export function endEventType(reason: GrantEndReason): ChangeType {
  switch (reason) {
    case 'released':
      return 'released';
    case 'expired':
    case 'max_hold':
      return 'expired';
    case 'revoked':
      return 'revoked';
    case 'session_ended':
      return 'session_ended';
    case 'resigned':
      return 'resigned';
  }
}
