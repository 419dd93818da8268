/**
 * A request waiting on Raft (a proposal, a read barrier, a transfer): a promise settled exactly
 * once — by the runtime, or by its deadline / AbortSignal with TimeoutError.
 */
import { TimeoutError } from './errors.js';

export class Pending<T> {
  readonly promise: Promise<T>;
  #resolve!: (value: T) => void;
  #reject!: (err: unknown) => void;
  #timer: NodeJS.Timeout | null = null;
  #signal: AbortSignal | undefined;
  #onAbort: (() => void) | null = null;
  #settled = false;

  /**
   * @param timeoutMs deadline from now; on expiry rejects with TimeoutError, then calls onExpire
   * @param signal    aborting rejects the same way (reason as `cause`)
   * @param onExpire  lets the owner forget the request (remove it from its map)
   */
  constructor(timeoutMs: number, signal: AbortSignal | undefined, onExpire: () => void) {
    this.promise = new Promise<T>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    const expire = (err: TimeoutError): void => {
      this.reject(err);
      onExpire();
    };
    if (signal?.aborted === true) {
      this.#settled = true;
      this.#reject(new TimeoutError('request aborted; outcome unknown', { cause: signal.reason }));
      return;
    }
    this.#timer = setTimeout(
      () => expire(new TimeoutError(`no result within ${timeoutMs} ms; outcome unknown`)),
      timeoutMs,
    );
    if (signal !== undefined) {
      this.#signal = signal;
      this.#onAbort = () =>
        expire(new TimeoutError('request aborted; outcome unknown', { cause: signal.reason }));
      signal.addEventListener('abort', this.#onAbort, { once: true });
    }
  }

  get settled(): boolean {
    return this.#settled;
  }

  resolve(value: T): void {
    if (this.#cleanup()) this.#resolve(value);
  }

  reject(err: unknown): void {
    if (this.#cleanup()) this.#reject(err);
  }

  /** Marks settled and releases the timer/listener; false if it was already settled. */
  #cleanup(): boolean {
    if (this.#settled) return false;
    this.#settled = true;
    if (this.#timer !== null) clearTimeout(this.#timer);
    if (this.#onAbort !== null) this.#signal?.removeEventListener('abort', this.#onAbort);
    return true;
  }
}
