/**
 * Resource use of a local process read from Linux's /proc (proc(5)): what the cluster tests and
 * the benches report about the node processes they start.
 */
import { readFileSync } from 'node:fs';

/** USER_HZ: the clock ticks per second /proc/<pid>/stat counts CPU time in (100 on Linux). */
const TICKS_PER_SECOND = 100;

/** A process's resident set and CPU time at one moment. */
export interface ProcUsage {
  /** Resident set size (VmRSS), bytes. */
  readonly rssBytes: number;
  /** CPU time used since the process started, user + system, ms (10 ms resolution). */
  readonly cpuMs: number;
}

/**
 * Resident set (bytes) and CPU time (ms, user + system) of process `pid`, from /proc/<pid>/stat
 * and /proc/<pid>/status. Throws when the process is gone (ENOENT).
 */
export function usage(pid: number): ProcUsage {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // After the `(comm)` field: index 11 = utime, 12 = stime (fields 14 and 15 of proc(5)), in ticks.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const cpuMs = ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
  const rssKb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
  return { rssBytes: rssKb * 1024, cpuMs };
}

/** One sample of a process: when (epoch ms, as in the node logs) and its usage then. */
export interface UsageSample extends ProcUsage {
  readonly atMs: number;
}

/** Samples within [fromMs, toMs] (epoch ms), and the CPU time (ms) used between the first and last. */
export function usageBetween(
  samples: readonly UsageSample[],
  fromMs: number,
  toMs: number,
): { readonly samples: readonly UsageSample[]; readonly cpuMs: number; readonly spanMs: number } {
  const inside = samples.filter((s) => s.atMs >= fromMs && s.atMs <= toMs);
  const first = inside[0];
  const last = inside[inside.length - 1];
  return {
    samples: inside,
    cpuMs: first === undefined || last === undefined ? 0 : last.cpuMs - first.cpuMs,
    spanMs: first === undefined || last === undefined ? 0 : last.atMs - first.atMs,
  };
}

/**
 * Samples the RSS and CPU time of some processes every `intervalMs` until `stop`. A process that
 * exits is simply not sampled any more.
 */
export class UsageSampler {
  readonly #samples = new Map<number, UsageSample[]>();
  readonly #timer: NodeJS.Timeout;

  constructor(pids: readonly number[], intervalMs = 100) {
    for (const pid of pids) this.add(pid);
    this.#timer = setInterval(() => {
      for (const pid of this.#samples.keys()) this.#sample(pid);
    }, intervalMs);
  }

  /** Starts sampling one more process. */
  add(pid: number): void {
    if (this.#samples.has(pid)) return;
    this.#samples.set(pid, []);
    this.#sample(pid);
  }

  /** Takes a last sample of each process and stops; returns the samples of each, by pid. */
  stop(): Map<number, readonly UsageSample[]> {
    clearInterval(this.#timer);
    for (const pid of this.#samples.keys()) this.#sample(pid);
    return new Map(this.#samples);
  }

  #sample(pid: number): void {
    try {
      this.#samples.get(pid)!.push({ atMs: Date.now(), ...usage(pid) });
    } catch {
      // the process is gone
    }
  }
}
