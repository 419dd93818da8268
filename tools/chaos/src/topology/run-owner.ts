/**
 * Who owns a chaos run, and whether that owner is verifiably dead.
 *
 * A pid alone is not an identity: this machine's pid_max is 32768, so a dead run's pid is soon
 * reused, and `kill(pid, 0)` on it says "alive" (a leak) — or a run's record may be compared with
 * the wrong process. An owner is therefore (pid, start time in clock ticks since boot from
 * `/proc/<pid>/stat` field 22, boot id). The owner is dead only when that exact process is gone:
 * no such pid, a zombie, a different start time (pid reused) or a different boot. Anything that
 * cannot be verified counts as alive, so cleanup never removes a run it is unsure about.
 */
import { readFileSync } from 'node:fs';

/** Identity of a run's owner process (recorded in the run's state file). */
export interface RunOwner {
  readonly pid: number;
  /** `/proc/<pid>/stat` field 22 (starttime, clock ticks since boot); null when unreadable. */
  readonly startTicks: number | null;
  /** `/proc/sys/kernel/random/boot_id`; null when unreadable. */
  readonly bootId: string | null;
}

/** What is known about an owner: `dead` only when verified (see the file header). */
export type OwnerLiveness = 'alive' | 'dead' | 'unknown';

function readText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

/** The current boot id, or null off Linux. */
export function currentBootId(): string | null {
  return readText('/proc/sys/kernel/random/boot_id')?.trim() ?? null;
}

/** Parsed `/proc/<pid>/stat`: state letter and start ticks, or null when the pid does not exist. */
export function readProcStat(
  pid: number,
): { readonly state: string; readonly startTicks: number } | null | 'unreadable' {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? null : 'unreadable';
  }
  // `pid (comm) state ppid …`: comm may hold spaces and parentheses, so split after the last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const state = fields[0];
  const startTicks = Number(fields[19]); // field 22 overall = index 19 after `pid (comm)`
  if (state === undefined || !Number.isSafeInteger(startTicks)) return 'unreadable';
  return { state, startTicks };
}

/** This process as a `RunOwner`. */
export function currentOwner(): RunOwner {
  const stat = readProcStat(process.pid);
  return {
    pid: process.pid,
    startTicks: stat !== null && stat !== 'unreadable' ? stat.startTicks : null,
    bootId: currentBootId(),
  };
}

/**
 * Whether `owner` is alive. `dead` when the boot id differs, the pid does not exist (or is a
 * zombie), or its start time differs from the recorded one (pid reused). Without /proc it falls
 * back on `kill(pid, 0)` (ESRCH → dead). Never throws.
 */
export function ownerLiveness(owner: RunOwner): OwnerLiveness {
  if (!Number.isSafeInteger(owner.pid) || owner.pid <= 0) return 'unknown';
  const bootId = currentBootId();
  if (owner.bootId !== null && bootId !== null && owner.bootId !== bootId) return 'dead';
  const stat = readProcStat(owner.pid);
  if (stat === null) return 'dead';
  if (stat !== 'unreadable') {
    if (stat.state === 'Z' || stat.state === 'X') return 'dead';
    if (owner.startTicks === null) return 'alive'; // old state file: the pid is all we know
    return stat.startTicks === owner.startTicks ? 'alive' : 'dead';
  }
  try {
    process.kill(owner.pid, 0);
    return 'alive';
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH' ? 'dead' : 'unknown';
  }
}
