/**
 * Wake-ups for long-polls and waits: the state adapter publishes, after every applied entry, the
 * resource keys it changed (`lease:NAME`, `election:GROUP`, `kv:KEY`); waiters subscribe per key.
 * It also hands on each entry's change events and snapshot restores (the streaming watch's event
 * log listens). Listeners run synchronously inside apply, so they must only schedule work (resolve
 * a promise) or do bounded work (append to the event log).
 */
import type { ChangeEvent } from '@tenure/coord-state';

type Listener = (index: number) => void;

/** Receives every applied entry's change events, and the index a snapshot restore moved to. */
export interface EntryListener {
  entry(index: number, events: readonly ChangeEvent[]): void;
  restored(index: number): void;
}

/** Per-key change notifications plus an "any entry applied" stream. */
export class ChangeHub {
  /** key → listeners; a key's set is deleted when it empties (bounded by live waiters). */
  readonly #byKey = new Map<string, Set<Listener>>();
  readonly #onApply = new Set<Listener>();
  readonly #onEntry = new Set<EntryListener>();

  /** Called by the state adapter after applying entry `index`. */
  publish(changed: readonly string[], index: number): void {
    for (const key of changed) {
      const set = this.#byKey.get(key);
      if (set) for (const fn of [...set]) fn(index);
    }
    for (const fn of [...this.#onApply]) fn(index);
  }

  /** Called by the state adapter after every applied entry `index` with its events (in order). */
  publishEvents(index: number, events: readonly ChangeEvent[]): void {
    for (const l of [...this.#onEntry]) l.entry(index, events);
  }

  /** Called by the state adapter after a snapshot restore: the state is now at `index`. */
  publishRestore(index: number): void {
    for (const l of [...this.#onEntry]) l.restored(index);
  }

  /** Listen to every entry's events and to restores; returns the unsubscribe function. */
  onEntry(listener: EntryListener): () => void {
    this.#onEntry.add(listener);
    return () => this.#onEntry.delete(listener);
  }

  /** Listen to changes of one resource key; returns the unsubscribe function. */
  subscribe(key: string, fn: Listener): () => void {
    let set = this.#byKey.get(key);
    if (!set) {
      set = new Set();
      this.#byKey.set(key, set);
    }
    set.add(fn);
    return () => {
      const s = this.#byKey.get(key);
      if (!s) return;
      s.delete(fn);
      if (s.size === 0) this.#byKey.delete(key);
    };
  }

  /** Listen to every applied entry (time advancer re-arm); returns the unsubscribe function. */
  onApply(fn: Listener): () => void {
    this.#onApply.add(fn);
    return () => this.#onApply.delete(fn);
  }

  /** Number of keys with listeners (metrics, leak tests). */
  watchedKeys(): number {
    return this.#byKey.size;
  }
}

/**
 * Wait until `check()` returns non-null, re-checking after each change of `key` (or of any of
 * the keys, when a list).
 * Resolves with the value, or with null when `deadlineMs` (performance.now() ms) passes or
 * `signal` aborts. Subscribes before the first check, so no change can slip between them.
 */
export function waitForChange<T>(
  hub: ChangeHub,
  key: string | readonly string[],
  check: () => T | null,
  deadlineMs: number,
  signal?: AbortSignal,
): Promise<T | null> {
  return new Promise((resolve) => {
    let done = false;
    let timer: NodeJS.Timeout | undefined = undefined;
    const finish = (v: T | null): void => {
      if (done) return;
      done = true;
      unsubscribe();
      if (timer) clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      resolve(v);
    };
    const onAbort = (): void => finish(null);
    const onChange = (): void => {
      const v = check();
      if (v !== null) finish(v);
    };
    const unsubscribes = (typeof key === 'string' ? [key] : key).map((k) =>
      hub.subscribe(k, onChange),
    );
    const unsubscribe = (): void => unsubscribes.forEach((u) => u());
    const first = check();
    if (first !== null) return finish(first);
    if (signal?.aborted) return finish(null);
    signal?.addEventListener('abort', onAbort, { once: true });
    timer = setTimeout(() => finish(null), Math.max(0, deadlineMs - performance.now()));
  });
}
