/**
 * Name-ordered pages of a map's keys (docs/api.md, Listings): the names starting with `prefix`
 * and sorting after the cursor `after`, in code-unit order, at most `limit` of them. A page costs
 * one pass over the map plus sorting the matching names; names are ASCII, so code-unit order is
 * byte order and the same on every replica.
 */

/**
 * @param names the candidates (a Map's keys), any order
 * @param prefix only names starting with it ('' = all)
 * @param after only names sorting strictly after it (null = from the first)
 * @param limit most names returned (≥ 0)
 */
export function pageOfNames(
  names: Iterable<string>,
  prefix: string,
  after: string | null,
  limit: number,
): string[] {
  const out: string[] = [];
  for (const name of names) {
    if (name.startsWith(prefix) && (after === null || name > after)) out.push(name);
  }
  out.sort();
  return out.length > limit ? out.slice(0, limit) : out;
}
