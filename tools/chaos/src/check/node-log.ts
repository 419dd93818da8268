/**
 * Reads a node's log in a run folder (`nodes/<id>.log`) into the events the node-exits checker
 * judges. Two kinds of lines matter:
 * - the harness's own lines (topology/netns-cluster.ts): `--- harness: start <id> <iso> …`,
 *   `--- harness: exit <id> code=<c> signal=<s> <iso>`, `--- harness: wiped <id> …`;
 * - the node's pino JSON lines (docs/operations.md: level 60 = fatal, 30 = info), possibly behind a
 *   `docker compose logs` prefix (`n1-1  | {…}`): the JSON starts at the first `{`.
 * Other lines (stderr text, partial lines of a killed process) are ignored.
 */

/** A harness `start` line: a new process lifetime of the node begins. */
export interface NodeStartLine {
  readonly kind: 'start';
  readonly lineNo: number;
  readonly iso: string;
}

/** A harness `exit` line: the process ended with `code` (or by `signal`). */
export interface NodeExitLine {
  readonly kind: 'exit';
  readonly lineNo: number;
  readonly code: number | null;
  readonly signal: string | null;
  readonly iso: string;
}

/** A pino JSON line of the node (only the fields the checker reads). */
export interface NodeLogEntry {
  readonly kind: 'log';
  readonly lineNo: number;
  /** pino level: 60 fatal, 50 error, 40 warn, 30 info. */
  readonly level: number;
  readonly msg: string;
  /** The node's wall clock, epoch ms (null when absent). */
  readonly epochMs: number | null;
  /** `err.message` of the line, first line only (fatal lines carry the error). */
  readonly errMessage: string | null;
  /** `signal` field (the node's "signal received" line). */
  readonly signal: string | null;
}

/** One interesting line of a node log, in file order. */
export type NodeLogEvent = NodeStartLine | NodeExitLine | NodeLogEntry;

const harnessStart = /^--- harness: start \S+ (\S+)/;
const harnessExit = /^--- harness: exit \S+ code=(\S+) signal=(\S+) (\S+)/;

/** Parses a node log's text (1-based line numbers). Never throws. */
export function parseNodeLog(text: string): NodeLogEvent[] {
  const out: NodeLogEvent[] = [];
  text.split('\n').forEach((line, i) => {
    const event = parseLine(line, i + 1);
    if (event !== null) out.push(event);
  });
  return out;
}

function parseLine(line: string, lineNo: number): NodeLogEvent | null {
  const start = harnessStart.exec(line);
  if (start !== null) return { kind: 'start', lineNo, iso: start[1]! };
  const exit = harnessExit.exec(line);
  if (exit !== null) {
    const code = exit[1] === 'null' ? null : Number(exit[1]);
    return {
      kind: 'exit',
      lineNo,
      code: code !== null && Number.isFinite(code) ? code : null,
      signal: exit[2] === 'null' ? null : exit[2]!,
      iso: exit[3]!,
    };
  }
  return parseJsonLine(line, lineNo);
}

function parseJsonLine(line: string, lineNo: number): NodeLogEntry | null {
  const brace = line.indexOf('{');
  if (brace < 0) return null;
  let value: unknown;
  try {
    value = JSON.parse(line.slice(brace));
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const o = value as Record<string, unknown>;
  if (typeof o['level'] !== 'number') return null;
  const err = o['err'] as Record<string, unknown> | undefined;
  const errMessage =
    typeof err === 'object' && err !== null && typeof err['message'] === 'string'
      ? err['message'].split('\n')[0]!
      : null;
  return {
    kind: 'log',
    lineNo,
    level: o['level'],
    msg: typeof o['msg'] === 'string' ? o['msg'] : '',
    epochMs: typeof o['time'] === 'number' ? o['time'] : null,
    errMessage,
    signal: typeof o['signal'] === 'string' ? o['signal'] : null,
  };
}
