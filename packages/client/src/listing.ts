/**
 * The listings of docs/api.md ("Listings"): `GET /v1/leases`, `GET /v1/elections` and `GET /v1/kv`
 * answer one page of names in byte order, filtered by `prefix`, starting after the `after` cursor, at
 * most `limit` items, with `nextCursor` (null on the last page). This module holds what the three
 * share: the query string, the answer's item field, and the walk that follows `nextCursor`.
 */
import type { ElectionView, LeaseView } from './contract.js';

/** The query of one listing page (docs/api.md, Listings). */
export interface ListQuery {
  /** Only names starting with this (`''`: every name). */
  readonly prefix?: string;
  /** Cursor: only names that sort after this one (the `nextCursor` of the previous page). */
  readonly after?: string;
  /** Page size, 1–1000 (the server's default is 100). */
  readonly limit?: number;
}

/** One page of a listing: the items in name order, and the cursor of the next page (null: last). */
export interface ListPage<T> {
  readonly items: T[];
  readonly nextCursor: string | null;
}

/** One key of `GET /v1/kv`: its name and revision (values are read one key at a time). */
export interface KvKeyView {
  readonly key: string;
  readonly revision: number;
}

/** What each listing lists. */
export interface ListItems {
  /** Live leases (exclusive grants). */
  readonly leases: LeaseView;
  /** Election groups that have candidates. */
  readonly elections: ElectionView;
  /** KV keys. */
  readonly kv: KvKeyView;
}

/** A listing: `leases`, `elections` or `kv`. */
export type ListKind = keyof ListItems;

/** Route and answer field of each listing (docs/api.md). */
const LISTINGS: Readonly<Record<ListKind, { readonly path: string; readonly field: string }>> = {
  leases: { path: '/v1/leases', field: 'leases' },
  elections: { path: '/v1/elections', field: 'elections' },
  kv: { path: '/v1/kv', field: 'keys' },
};

/** The field of a listing answer of `kind` that holds its items (`leases`, `elections`, `keys`). */
export function listField(kind: ListKind): string {
  return LISTINGS[kind].field;
}

/** The request path of one page of `kind` for `query` (absent fields are left to the server). */
export function listPath(kind: ListKind, query: ListQuery): string {
  const params = new URLSearchParams();
  if (query.prefix !== undefined) params.set('prefix', query.prefix);
  if (query.after !== undefined) params.set('after', query.after);
  if (query.limit !== undefined) params.set('limit', String(query.limit));
  const { path } = LISTINGS[kind];
  return params.size > 0 ? `${path}?${params}` : path;
}

/** The page in a listing answer of `kind` (`{leases|elections|keys: [...], nextCursor}`). */
export function pageOf<K extends ListKind>(
  kind: K,
  answer: Readonly<Record<string, unknown>>,
): ListPage<ListItems[K]> {
  const items = answer[listField(kind)];
  const nextCursor = answer['nextCursor'];
  return {
    items: Array.isArray(items) ? (items as ListItems[K][]) : [],
    nextCursor: typeof nextCursor === 'string' ? nextCursor : null,
  };
}

/**
 * Yields every item of a listing, page after page: `fetchPage(after)` is called first with the
 * query's own `after` and then with each `nextCursor`, until a page says it is the last. Each page
 * is read on its own, so an item created or removed during the walk may or may not appear, but
 * none appears twice: a cursor that does not move forward (a server bug) throws RangeError rather
 * than looping.
 */
export async function* walkPages<T>(
  firstAfter: string | undefined,
  fetchPage: (after: string | undefined) => Promise<ListPage<T>>,
): AsyncGenerator<T, void, undefined> {
  let after = firstAfter;
  for (;;) {
    const page = await fetchPage(after);
    yield* page.items;
    if (page.nextCursor === null) return;
    if (after !== undefined && page.nextCursor <= after)
      throw new RangeError(`listing cursor went backwards: ${page.nextCursor} after ${after}`);
    after = page.nextCursor;
  }
}
