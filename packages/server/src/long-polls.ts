/**
 * The bound on long-polls waiting at once on a node (`--long-polls-max`; docs/security.md, Abuse
 * resistance): `GET /v1/leases/:name/watch` and `GET /v1/elections/:group/observe`. One more is
 * refused with 429 `resource_exhausted` and `Retry-After: 1` before it waits.
 */
import { HttpError } from './http-error.js';

/** Counts the long-polls in flight on one node. */
export class LongPolls {
  readonly #max: number;
  #open = 0;

  constructor(max: number) {
    this.#max = max;
  }

  /** Long-polls in flight now. */
  get open(): number {
    return this.#open;
  }

  /** Run `poll` as one long-poll; throws the 429 HttpError when `max` are already waiting. */
  async hold<T>(poll: () => Promise<T>): Promise<T> {
    if (this.#open >= this.#max)
      throw new HttpError(
        'resource_exhausted',
        `this node has its most long-polls waiting (${this.#max}); retry later or on another node`,
        { limit: this.#max },
        { 'retry-after': '1' },
      );
    this.#open++;
    try {
      return await poll();
    } finally {
      this.#open--;
    }
  }
}
