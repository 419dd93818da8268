/**
 * Which changes one watch wants (docs/api.md, "Streaming watch"): names starting with `prefix`,
 * of the listed `kinds` (all when none are listed), and `renewed` events only when asked for
 * (they are frequent and rarely interesting).
 */
import type { ChangeKind } from '@tenure/coord-state';
import type { LoggedEvent } from './event-log.js';

/** Every `kinds` word, in the order docs/api.md lists them. */
export const CHANGE_KINDS: readonly ChangeKind[] = [
  'lease',
  'semaphore',
  'election',
  'kv',
  'session',
];

/** A comma-separated list of kinds, e.g. `lease,kv` (the query's `kinds` pattern). */
export const KINDS_PATTERN = `^(${CHANGE_KINDS.join('|')})(,(${CHANGE_KINDS.join('|')}))*$`;

/** A watch's filter. */
export interface WatchFilter {
  readonly prefix: string;
  /** null: every kind. */
  readonly kinds: ReadonlySet<ChangeKind> | null;
  readonly renewals: boolean;
}

/** The filter of a query (its `kinds` already matched KINDS_PATTERN). */
export function watchFilter(query: {
  prefix?: string | undefined;
  kinds?: string | undefined;
  renewals?: boolean | undefined;
}): WatchFilter {
  return {
    prefix: query.prefix ?? '',
    kinds: query.kinds === undefined ? null : new Set(query.kinds.split(',') as ChangeKind[]),
    renewals: query.renewals === true,
  };
}

/** True if `event` passes `filter`. */
export function matches(filter: WatchFilter, event: LoggedEvent): boolean {
  if (filter.kinds !== null && !filter.kinds.has(event.kind)) return false;
  if (event.type === 'renewed' && !filter.renewals) return false;
  return event.name.startsWith(filter.prefix);
}
