/**
 * History helpers shared by the checkers: pairing invoke/complete events into operations, reading
 * JSON-lines files, and classifying an operation's outcome into what a checker may assume.
 *
 * Classification (docs/api.md Errors, §1.2): a 2xx is `ok` (took effect, value known); a 4xx is a
 * definite refusal (`fail`: did not take effect); everything else — 504 `timeout`, connection loss,
 * client deadline, and also 503 `no_leader` and other 5xx — is treated as `maybe` (may or may not
 * have taken effect). 503 is recorded as `fail` by the workload (types.ts) but a server could return
 * it after proposing, so checkers treat it as unknown: that keeps them sound (no false positives).
 */
import { readFileSync, existsSync } from 'node:fs';
import type { HistoryEvent, HistoryOp, Json, JsonObject, OpOutcome } from '../types.js';

/** What a checker may assume about an operation's effect. */
export type Effect = 'ok' | 'fail' | 'maybe';

/**
 * Pairs invoke and complete events by `opId` into operations, ordered by invoke time (ties by opId).
 * An invoke without a complete becomes `{ completeMs: null, outcome: unknown 'no complete event' }`.
 * Throws Error when a complete has no invoke or an opId is invoked twice (a broken recorder).
 */
export function pairEvents(events: readonly HistoryEvent[]): HistoryOp[] {
  const open = new Map<number, HistoryOp>();
  const done: HistoryOp[] = [];
  for (const ev of events) {
    if (ev.type === 'invoke') {
      if (open.has(ev.opId)) throw new Error(`history: opId ${ev.opId} invoked twice`);
      open.set(ev.opId, {
        opId: ev.opId,
        process: ev.process,
        node: ev.node,
        kind: ev.kind,
        args: ev.args,
        invokeMs: ev.timeMs,
        completeMs: null,
        outcome: { status: 'unknown', reason: 'no complete event' },
      });
    } else {
      const inv = open.get(ev.opId);
      if (inv === undefined)
        throw new Error(`history: complete for opId ${ev.opId} without an open invoke`);
      open.delete(ev.opId);
      done.push({ ...inv, node: ev.node ?? inv.node, completeMs: ev.timeMs, outcome: ev.outcome });
    }
  }
  const all = [...done, ...open.values()];
  all.sort((a, b) => a.invokeMs - b.invokeMs || a.opId - b.opId);
  return all;
}

/** Reads a JSON-lines file into values; a missing file gives []; a torn last line is ignored. */
export function readJsonl<T>(path: string): T[] {
  if (!existsSync(path)) return [];
  const lines = readFileSync(path, 'utf8').split('\n');
  const out: T[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === '') continue;
    try {
      out.push(JSON.parse(line) as T);
    } catch (err) {
      if (i < lines.length - 2) throw new Error(`${path}:${i + 1}: bad JSON line`, { cause: err });
    }
  }
  return out;
}

/** The checker's view of an outcome (see the module comment). */
export function effectOf(outcome: OpOutcome): Effect {
  if (outcome.status === 'ok') return 'ok';
  if (outcome.status === 'fail' && outcome.httpStatus >= 400 && outcome.httpStatus < 500)
    return 'fail';
  return 'maybe';
}

/** The error code of a definite failure, else null. */
export function failCode(outcome: OpOutcome): string | null {
  return outcome.status === 'fail' ? outcome.code : null;
}

/** The `ok` value as an object, else null. */
export function okValue(outcome: OpOutcome): JsonObject | null {
  if (outcome.status !== 'ok') return null;
  const v = outcome.value;
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? v : null;
}

/** Reads `obj[key]` as a finite number, else null. */
export function num(obj: JsonObject | null | undefined, key: string): number | null {
  const v = obj?.[key];
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

/** Reads `obj[key]` as a string, else null. */
export function str(obj: JsonObject | null | undefined, key: string): string | null {
  const v = obj?.[key];
  return typeof v === 'string' ? v : null;
}

/** Reads `obj[key]` as an object, else null. */
export function obj(o: JsonObject | null | undefined, key: string): JsonObject | null {
  const v = o?.[key];
  return v !== null && v !== undefined && typeof v === 'object' && !Array.isArray(v) ? v : null;
}

/** Canonical JSON (sorted object keys) so equal values compare equal as strings. */
export function canonicalJson(value: Json | undefined): string {
  if (value === undefined) return 'null';
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const keys = Object.keys(value).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`).join(',')}}`;
}

/** A short human description of an op for violation messages. */
export function describeOp(op: HistoryOp): string {
  const end = op.completeMs === null ? '?' : op.completeMs.toFixed(1);
  const out =
    op.outcome.status === 'ok'
      ? `ok ${JSON.stringify(op.outcome.value)}`
      : op.outcome.status === 'fail'
        ? `fail ${op.outcome.httpStatus} ${op.outcome.code}`
        : `unknown (${op.outcome.reason})`;
  return `#${op.opId} ${op.process} ${op.kind} ${JSON.stringify(op.args)} [${op.invokeMs.toFixed(1)}..${end}] → ${out}`;
}

/** Percentiles of `values` (testkit's one HDR-histogram helper); empty input gives nulls. */
export { percentiles } from '@tenure/testkit';
