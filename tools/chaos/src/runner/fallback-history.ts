/**
 * The runner's own in-memory `HistorySink`, used when workload/index.ts does not export
 * `createHistory` (and by scenarios that record their own client operations). Contract as in
 * types.ts: fresh opIds, at most one complete per op, times from the run clock.
 */
import type {
  HistoryEvent,
  HistoryOp,
  HistorySink,
  JsonObject,
  NodeId,
  OpKind,
  OpOutcome,
  RunClock,
} from '../types.js';

/** Events kept at most (bounded memory; further events throw). */
export const historyEventsMax = 2_000_000;

/** A plain in-memory history. Throws on a second complete or an unknown opId. */
export function createFallbackHistory(clock: RunClock): HistorySink {
  const events: HistoryEvent[] = [];
  const open = new Map<
    number,
    { process: string; kind: OpKind; args: JsonObject; node: NodeId | null; invokeMs: number }
  >();
  const done: HistoryOp[] = [];
  let nextOpId = 1;
  const push = (event: HistoryEvent): void => {
    if (events.length >= historyEventsMax)
      throw new Error(`history full (${historyEventsMax} events)`);
    events.push(event);
  };
  return {
    invoke(process, kind, args, node) {
      const opId = nextOpId++;
      const timeMs = clock.now();
      open.set(opId, { process, kind, args, node, invokeMs: timeMs });
      push({ type: 'invoke', opId, process, node, kind, args, timeMs });
      return opId;
    },
    complete(opId, outcome: OpOutcome, node) {
      const inv = open.get(opId);
      if (inv === undefined)
        throw new Error(`history: complete of unknown or completed op ${opId}`);
      open.delete(opId);
      const timeMs = clock.now();
      push({ type: 'complete', opId, process: inv.process, node, kind: inv.kind, timeMs, outcome });
      done.push({
        opId,
        process: inv.process,
        node: node ?? inv.node,
        kind: inv.kind,
        args: inv.args,
        invokeMs: inv.invokeMs,
        completeMs: timeMs,
        outcome,
      });
    },
    events: () => [...events],
    ops: () => {
      const pending: HistoryOp[] = [...open.entries()].map(([opId, inv]) => ({
        opId,
        process: inv.process,
        node: inv.node,
        kind: inv.kind,
        args: inv.args,
        invokeMs: inv.invokeMs,
        completeMs: null,
        outcome: { status: 'unknown', reason: 'no complete event' },
      }));
      return [...done, ...pending].sort((a, b) => a.invokeMs - b.invokeMs || a.opId - b.opId);
    },
  };
}
