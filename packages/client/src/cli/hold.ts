/**
 * Keeping a lease, permit, leadership or session in the foreground until Ctrl-C, as `lease acquire
 * --hold`, `sem acquire --hold`, `session create --hold` and `elect` do.
 */
import { formatDurationMs } from '../duration.js';
import type { TenureError } from '../errors.js';
import type { EndReason, HeldGrantEvents } from '../held-grant.js';
import type { EventEmitter } from 'node:events';
import type { CliRun } from './context.js';
import { EXIT } from './exit-codes.js';
import { describeError, errorJson } from './format.js';

/** What can be held in the foreground: a grant handle, or a session (which has no token). */
export interface Holdable extends Pick<EventEmitter<HeldGrantEvents>, 'on' | 'off'> {
  readonly signal: AbortSignal;
  readonly endReason: EndReason | null;
  readonly remainingMs: number;
  readonly ttlMs: number;
  /** Absent for a session. */
  readonly fencingToken?: number;
}

/**
 * Keeps a held grant until `interrupt` aborts (resolves EXIT.ok) or the grant is lost (EXIT.conflict),
 * printing renewals (`--json` only), jeopardy and loss.
 */
export function holdUntilInterrupt(run: CliRun, held: Holdable, json: boolean): Promise<number> {
  const interrupt = run.io.interrupt;
  return new Promise((resolve) => {
    const onRenewed = (): void => {
      if (json)
        run.out(
          JSON.stringify({ event: 'renewed', fencingToken: held.fencingToken, ttlMs: held.ttlMs }),
        );
    };
    const onAtRisk = (error: TenureError): void => {
      if (json) run.out(JSON.stringify({ event: 'atRisk', error: errorJson(error) }));
      else
        run.err(
          `warning: renewal failing (${error.code}), ${formatDurationMs(Math.round(held.remainingMs))} left`,
        );
    };
    const finish = (code: number): void => {
      held.off('renewed', onRenewed);
      held.off('atRisk', onAtRisk);
      interrupt.removeEventListener('abort', onInterrupt);
      held.signal.removeEventListener('abort', onLost);
      resolve(code);
    };
    const onInterrupt = (): void => finish(EXIT.ok);
    const onLost = (): void => {
      if (held.endReason === 'released') return finish(EXIT.ok);
      const reason: unknown = held.signal.reason;
      if (json) run.out(JSON.stringify({ event: 'lost', error: errorJson(reason) }));
      else run.err(`lost: ${describeError(reason)}`);
      finish(EXIT.conflict);
    };
    held.on('renewed', onRenewed);
    held.on('atRisk', onAtRisk);
    if (interrupt.aborted) return finish(EXIT.ok);
    if (held.signal.aborted) return onLost();
    interrupt.addEventListener('abort', onInterrupt, { once: true });
    held.signal.addEventListener('abort', onLost, { once: true });
  });
}
