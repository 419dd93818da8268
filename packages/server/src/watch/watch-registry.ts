/**
 * The open streaming watches of one node: the cap on how many may be open at once, one shared
 * keepalive timer for all of them (docs/api.md, "Streaming watch": a comment every
 * `keepaliveMs`), and closing them all when the server shuts down.
 */
import type { WatchStream } from './watch-stream.js';

/** Bounds and timing of the registry. */
export interface WatchRegistryOptions {
  /** Most watches open at once on this node (more are refused with 429). */
  readonly watchesMax: number;
  /** Interval of keepalive comments, ms. */
  readonly keepaliveMs: number;
}

/** Open watches of one node. */
export class WatchRegistry {
  readonly #opts: WatchRegistryOptions;
  readonly #open = new Set<WatchStream>();
  /** Running while at least one watch is open. */
  #timer: NodeJS.Timeout | null = null;

  constructor(opts: WatchRegistryOptions) {
    this.#opts = opts;
  }

  /** Watches open now. */
  get size(): number {
    return this.#open.size;
  }

  /** True when another watch would pass `watchesMax`. */
  full(): boolean {
    return this.#open.size >= this.#opts.watchesMax;
  }

  /** Adds an open stream (the caller checked `full()` first). */
  add(stream: WatchStream): void {
    this.#open.add(stream);
    this.#timer ??= setInterval(() => {
      for (const s of [...this.#open]) s.keepalive();
    }, this.#opts.keepaliveMs).unref();
  }

  /** Removes a stream that ended. */
  remove(stream: WatchStream): void {
    this.#open.delete(stream);
    if (this.#open.size === 0 && this.#timer !== null) {
      clearInterval(this.#timer);
      this.#timer = null;
    }
  }

  /** Auth changed: every open stream checks its token again (watch-stream.ts `reauthorize`). */
  reauthorize(): void {
    for (const s of [...this.#open]) s.reauthorize();
  }

  /** Ends every open stream (server shutdown): clients resume elsewhere. */
  closeAll(): void {
    for (const s of [...this.#open]) s.close();
  }
}
