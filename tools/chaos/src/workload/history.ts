/**
 * The workload's history recorder (types.ts `HistorySink`): Jepsen-style invoke/complete events
 * stamped with the run clock, kept in memory and optionally streamed to a JSON-lines file as they
 * happen (so a harness crash still leaves the history on disk).
 */
import { createWriteStream, type WriteStream } from 'node:fs';
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
import { pairEvents } from '../check/history.js';

/** Events kept at most (bounded memory; a further invoke throws RangeError). */
export const historyEventsMax = 2_000_000;

/** A recorder; `close` flushes the stream (if any). */
export interface HistoryRecorder extends HistorySink {
  close(): Promise<void>;
}

/**
 * Makes a recorder. `jsonlPath`: append every event as one JSON line there too.
 * Errors: `complete` of an unknown or already completed opId throws Error (a workload bug).
 */
export function createRecorder(clock: RunClock, jsonlPath?: string): HistoryRecorder {
  const events: HistoryEvent[] = [];
  const open = new Map<number, { process: string; kind: OpKind }>();
  let nextOpId = 1;
  const stream: WriteStream | null =
    jsonlPath === undefined ? null : createWriteStream(jsonlPath, { flags: 'a' });
  const push = (e: HistoryEvent): void => {
    if (events.length >= historyEventsMax)
      throw new RangeError(`history full (${historyEventsMax} events)`);
    events.push(e);
    stream?.write(`${JSON.stringify(e)}\n`);
  };
  return {
    invoke(process: string, kind: OpKind, args: JsonObject, node: NodeId | null): number {
      const opId = nextOpId++;
      open.set(opId, { process, kind });
      push({ type: 'invoke', opId, process, node, kind, args, timeMs: clock.now() });
      return opId;
    },
    complete(opId: number, outcome: OpOutcome, node: NodeId | null): void {
      const inv = open.get(opId);
      if (inv === undefined)
        throw new Error(`history: complete of unknown or completed op ${opId}`);
      open.delete(opId);
      push({
        type: 'complete',
        opId,
        process: inv.process,
        node,
        kind: inv.kind,
        timeMs: clock.now(),
        outcome,
      });
    },
    events: () => [...events],
    ops: (): HistoryOp[] => pairEvents(events),
    close: () =>
      new Promise<void>((resolve) => {
        if (stream === null) resolve();
        else stream.end(() => resolve());
      }),
  };
}
