/**
 * Running system tools (ip, tc, iptables, docker) for the chaos harness: every call has a
 * deadline, and a failure throws an Error naming the command and its stderr.
 */
import { execFile, execFileSync } from 'node:child_process';

/** Deadline for one system command, in ms (ip/tc/iptables answer in milliseconds). */
export const commandTimeoutMs = 15_000;

/** The error thrown when a command exits non-zero: carries its stderr. */
export class CommandError extends Error {
  constructor(
    readonly command: string,
    readonly stderr: string,
    readonly exitCode: number | null,
  ) {
    super(`command failed (${exitCode ?? 'signal'}): ${command}: ${stderr.trim()}`);
    this.name = 'CommandError';
  }
}

/**
 * Runs `file args…` and resolves with its stdout. Throws `CommandError` on a non-zero exit or
 * when it runs past `timeoutMs` (default `commandTimeoutMs`).
 */
export function run(
  file: string,
  args: readonly string[],
  timeoutMs: number = commandTimeoutMs,
): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { timeout: timeoutMs, encoding: 'utf8' }, (error, stdout, stderr) => {
      if (error !== null) {
        const code = typeof error.code === 'number' ? error.code : null;
        reject(new CommandError([file, ...args].join(' '), stderr || error.message, code));
        return;
      }
      resolve(stdout);
    });
  });
}

/** Like `run`, but resolves false instead of throwing (for cleanup that may find nothing). */
export async function tryRun(file: string, args: readonly string[]): Promise<boolean> {
  try {
    await run(file, args);
    return true;
  } catch {
    return false;
  }
}

/**
 * Synchronous best-effort command for exit handlers (where no promise can finish).
 * Never throws; returns stdout or '' on failure.
 */
export function runSyncQuiet(file: string, args: readonly string[]): string {
  try {
    return execFileSync(file, args, {
      timeout: commandTimeoutMs,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
  } catch {
    return '';
  }
}
