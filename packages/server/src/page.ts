/**
 * Cursor pagination of listings (docs/api.md, Listings): a route asks the state for `limit + 1`
 * items after the cursor; the extra item only tells whether there is more. `nextCursor` is the
 * last name of the page, to pass as `after` for the next one, or null on the last page.
 */

/** One page of a listing. */
export interface Page<T> {
  readonly items: T[];
  readonly nextCursor: string | null;
}

/**
 * @param fetched up to `limit + 1` items in name order
 * @param limit the page size asked for (≥ 1)
 * @param nameOf the item's name (its cursor)
 */
export function pageOf<T>(fetched: T[], limit: number, nameOf: (item: T) => string): Page<T> {
  if (fetched.length <= limit) return { items: fetched, nextCursor: null };
  const items = fetched.slice(0, limit);
  return { items, nextCursor: nameOf(items[items.length - 1]!) };
}
