/**
 * Checker `node-exits`: a node process never stops on its own (docs/operations.md exit codes:
 * 70 = fatal error, 1 = start-up failure, 2 = bad configuration or a refused start). A fault that
 * restarts a node would otherwise hide such a death from every other checker (the 30-minute run of
 * 2026-12-02: n3 died twice with 70, "committed entries must be applied in order without gaps",
 * and the run passed).
 *
 * Input: the node logs of the run folder, `nodes/*.log` (node-log.ts). Every harness `exit` line
 * must be explained by:
 * - a signal only the harness sends: SIGKILL (crash, restart-all, membership faults, the end of
 *   the run: the backend SIGKILLs every node on teardown) or SIGTERM (stops of the clock and
 *   rolling-restart faults);
 * - code 0 after the node logged that it stops: `signal received` / `cluster shutdown signal
 *   received` (a harness SIGTERM handled gracefully) or `this node was removed from the cluster;
 *   exiting` (the membership fault's live removal). A code-0 exit of a lifetime that logged no
 *   info line at all (a log level above info) is let pass: the log cannot tell.
 * Anything else is a `node-exit` violation naming the node, code/signal, the harness's wall time
 * and the first level-60 (fatal) line of that process lifetime when there is one. A level-60 line
 * not tied to such an exit (the node survived it, or was killed right after) is a `fatal-log`
 * violation. The membership fault always rejoins a wiped node with `--join`, so a refused start
 * (code 2) is never expected.
 *
 * Backends: the netns backend writes the harness lines; the compose backend keeps only
 * `docker compose logs` output (no exit lines), so there only fatal lines are judged and the stat
 * `exitRecords` says exits were not recorded.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { Checker, CheckResult, RunRecord, Violation } from '../types.js';
import {
  parseNodeLog,
  type NodeExitLine,
  type NodeLogEntry,
  type NodeLogEvent,
} from './node-log.js';

/** Signals only the harness sends to a node process (topology/backend.ts killNode / stopNode). */
const harnessSignals: ReadonlySet<string> = new Set(['SIGKILL', 'SIGTERM']);

/** Messages of the node (packages/server main.ts / node.ts) announcing a deliberate stop. */
const stopMessages: ReadonlySet<string> = new Set([
  'signal received',
  'cluster shutdown signal received',
  'this node was removed from the cluster; exiting',
]);

/** pino's fatal level. */
const fatalLevel = 60;

/** Counts of one node log's judgement. */
interface NodeTally {
  starts: number;
  exits: number;
  explained: number;
  fatalLines: number;
}

/** What one process lifetime (harness start → exit) logged so far. */
interface Lifetime {
  fatal: NodeLogEntry[];
  stopAnnounced: boolean;
  sawInfo: boolean;
}

const freshLifetime = (): Lifetime => ({ fatal: [], stopAnnounced: false, sawInfo: false });

/**
 * Judges one node's log events (file order). Returns the violations and adds to `tally`.
 * `hasHarnessLines` is false for logs without harness lines (compose): then only fatal lines count.
 */
export function judgeNodeLog(
  node: string,
  events: readonly NodeLogEvent[],
  tally: NodeTally = { starts: 0, exits: 0, explained: 0, fatalLines: 0 },
): Violation[] {
  const violations: Violation[] = [];
  let life = freshLifetime();
  for (const e of events) {
    if (e.kind === 'start') {
      tally.starts++;
      violations.push(...strayFatal(node, life.fatal));
      life = freshLifetime();
    } else if (e.kind === 'log') {
      if (e.level >= fatalLevel) {
        tally.fatalLines++;
        life.fatal.push(e);
      }
      if (e.level <= 30) life.sawInfo = true;
      if (stopMessages.has(e.msg)) life.stopAnnounced = true;
    } else {
      tally.exits++;
      if (exitExplained(e, life)) {
        tally.explained++;
        violations.push(...strayFatal(node, life.fatal));
      } else {
        violations.push(exitViolation(node, e, life.fatal[0] ?? null));
      }
      life = freshLifetime();
    }
  }
  violations.push(...strayFatal(node, life.fatal));
  return violations;
}

function exitExplained(e: NodeExitLine, life: Lifetime): boolean {
  if (e.signal !== null) return harnessSignals.has(e.signal);
  return e.code === 0 && (life.stopAnnounced || !life.sawInfo);
}

function describeFatal(f: NodeLogEntry): string {
  return `line ${f.lineNo} "${f.msg}"${f.errMessage !== null ? `: ${f.errMessage}` : ''}`;
}

function exitViolation(node: string, e: NodeExitLine, fatal: NodeLogEntry | null): Violation {
  const how = e.signal !== null ? `signal ${e.signal}` : `code ${e.code ?? 'null'}`;
  const why =
    e.signal !== null
      ? 'a signal the harness never sends'
      : e.code === 0
        ? 'without logging a stop signal or its removal'
        : 'on its own (no harness signal)';
  return {
    property: 'node-exit',
    message: `node ${node} exited with ${how} at ${e.iso}, ${why}; nodes/${node}.log line ${e.lineNo}${fatal !== null ? `; fatal ${describeFatal(fatal)}` : ''}`,
    details: {
      node,
      code: e.code,
      signal: e.signal,
      iso: e.iso,
      line: e.lineNo,
      fatal: fatal === null ? null : describeFatal(fatal),
    },
  };
}

function strayFatal(node: string, fatal: readonly NodeLogEntry[]): Violation[] {
  return fatal.map((f) => ({
    property: 'fatal-log',
    message: `node ${node} logged a fatal (level 60) line: nodes/${node}.log ${describeFatal(f)}${f.epochMs !== null ? ` at ${new Date(f.epochMs).toISOString()}` : ''}`,
    details: { node, line: f.lineNo, fatal: describeFatal(f) },
  }));
}

/**
 * Runs the rules over `<runDir>/nodes/*.log` (every log there, named by file). A run folder
 * without `nodes/` passes with the stat `logs: none`.
 */
export function checkNodeExits(runDir: string): CheckResult {
  const dir = join(runDir, 'nodes');
  if (!existsSync(dir))
    return { ok: true, violations: [], stats: { logs: 'none (no nodes/ folder)' } };
  const tally: NodeTally = { starts: 0, exits: 0, explained: 0, fatalLines: 0 };
  const violations: Violation[] = [];
  const withoutHarness: string[] = [];
  const files = readdirSync(dir).filter((f) => f.endsWith('.log'));
  for (const file of files.sort()) {
    const node = basename(file, '.log');
    const events = parseNodeLog(readFileSync(join(dir, file), 'utf8'));
    if (!events.some((e) => e.kind === 'start')) withoutHarness.push(node);
    violations.push(...judgeNodeLog(node, events, tally));
  }
  return {
    ok: violations.length === 0,
    violations,
    stats: {
      nodeLogs: files.length,
      starts: tally.starts,
      exits: tally.exits,
      exitsExplained: tally.explained,
      fatalLines: tally.fatalLines,
      exitRecords:
        withoutHarness.length === 0
          ? 'all logs'
          : `none for ${withoutHarness.join(',')} (no harness lines, e.g. compose): exits not judged, fatal lines still are`,
    },
  };
}

/** The checker (name `node-exits`): `checkNodeExits(run.runDir)`. */
export function nodeExitsChecker(): Checker {
  return { name: 'node-exits', check: (run: RunRecord) => checkNodeExits(run.runDir) };
}
