/**
 * Event-loop stall of encoding the whole state (`npm run bench:snapshot-loop`): builds a state of
 * N leases (default 100,000; `--leases N`), then encodes and hashes it twice while a 1 ms timer
 * and `perf_hooks.monitorEventLoopDelay` watch the event loop — in one step (`snapshot()`, what a
 * backup, the state-hash route and a Raft snapshot did before) and in slices with a turn of the
 * event loop between them (`snapshotSlices` driven by `driveSlices`, what they do now). Prints,
 * for each (and for one idle second: the machine's own delay), the wall time of the encoding, the
 * number of slices and the longest event-loop delay seen; checks that both give the same bytes.
 * `--sliced-only` skips the one-step encoding (minutes at a million leases). The npm script runs it
 * with `--max-old-space-size=8192` (room for a million leases).
 */
import { createHash } from 'node:crypto';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { Command } from 'commander';
import { CoordStateMachine, SNAPSHOT_SLICE_ENTRIES } from '@tenure/coord-state';
import { driveSlices } from '@tenure/raft';

interface Measured {
  readonly wallMs: number;
  readonly slices: number;
  /** CPU time (user + system, ms) of the longest single step: what one turn of the loop costs. */
  readonly maxStepCpuMs: number;
  /** Longest garbage-collection pause meanwhile (ms): part of the delay no slicing removes. */
  readonly maxGcMs: number;
  readonly maxDelayMs: number;
  readonly p99DelayMs: number;
  readonly sha256: string;
}

function buildState(leases: number): CoordStateMachine {
  const sm = new CoordStateMachine();
  for (let i = 0; i < leases; i++) {
    sm.apply(i + 1, 1_000 + Math.floor(i / 100), {
      v: 1,
      command: {
        type: 'lease.acquire',
        name: `service.${(i * 7_919) % leases}.leader`,
        holder: `holder-${i % 1_000}`,
        ttlMs: 3_600_000,
        waitMs: 0,
        lockDelayMs: 0,
        maxHoldMs: null,
      },
      idempotency: null,
    });
  }
  if (sm.counts().leases !== leases)
    throw new Error(`built ${sm.counts().leases} leases, not ${leases}`);
  return sm;
}

/** CPU time (user + system, ms) of this process since `start`. */
function cpuMsSince(start: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

/** Runs `encode` while a 1 ms timer and the event-loop delay histogram watch the loop. */
async function watched(
  encode: () => Promise<{ slices: number; sha256: string; maxStepCpuMs: number }>,
): Promise<Measured> {
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  let lastTickMs = performance.now();
  let maxGapMs = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    maxGapMs = Math.max(maxGapMs, now - lastTickMs);
    lastTickMs = now;
  }, 1);
  let maxGcMs = 0;
  const gc = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) maxGcMs = Math.max(maxGcMs, entry.duration);
  });
  gc.observe({ entryTypes: ['gc'] });
  histogram.enable();
  // Let the timer and the histogram start before the encoding.
  await new Promise((resolve) => setTimeout(resolve, 20));
  const startMs = performance.now();
  const { slices, sha256, maxStepCpuMs } = await encode();
  const wallMs = performance.now() - startMs;
  await new Promise((resolve) => setTimeout(resolve, 20));
  histogram.disable();
  gc.disconnect();
  clearInterval(timer);
  return {
    wallMs,
    slices,
    maxStepCpuMs,
    maxGcMs,
    maxDelayMs: Math.max(histogram.max / 1e6, maxGapMs),
    p99DelayMs: histogram.percentile(99) / 1e6,
    sha256,
  };
}

async function main(): Promise<void> {
  const program = new Command()
    .option('--leases <n>', 'leases in the state', '100000')
    .option('--sliced-only', 'skip the one-step encoding (minutes at a million leases)')
    .parse(process.argv);
  const opts = program.opts<{ leases: string; slicedOnly?: boolean }>();
  const leases = Number(opts.leases);
  if (!Number.isSafeInteger(leases) || leases < 1) throw new Error('--leases: a positive integer');
  const buildStart = performance.now();
  const sm = buildState(leases);
  console.log(
    `state: ${leases} leases, built in ${((performance.now() - buildStart) / 1000).toFixed(1)} s`,
  );
  // The loop's own delay on this machine (other processes, GC), for reference.
  const idle = await watched(async () => {
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    return { slices: 0, sha256: '', maxStepCpuMs: 0 };
  });
  const oneStep =
    opts.slicedOnly === true
      ? null
      : await watched(async () => {
          const cpu = process.cpuUsage();
          const sha256 = createHash('sha256').update(sm.snapshot()).digest('hex');
          return { slices: 1, sha256, maxStepCpuMs: cpuMsSince(cpu) };
        });
  const sliced = await watched(async () => {
    const hash = createHash('sha256');
    const slices = sm.snapshotSlices();
    let maxStepCpuMs = 0;
    const timed: Iterator<Uint8Array, void, undefined> = {
      next: () => {
        const cpu = process.cpuUsage();
        const step = slices.next();
        if (step.done !== true) hash.update(step.value);
        maxStepCpuMs = Math.max(maxStepCpuMs, cpuMsSince(cpu));
        return step;
      },
    };
    const driven = await driveSlices(timed);
    return { slices: driven.steps, sha256: hash.digest('hex'), maxStepCpuMs };
  });
  if (oneStep !== null && oneStep.sha256 !== sliced.sha256)
    throw new Error('the sliced bytes differ from snapshot()');
  console.log(`slice size: ${SNAPSHOT_SLICE_ENTRIES} entries`);
  const rows: [string, Measured | null][] = [
    ['idle 1 s', idle],
    ['one step', oneStep],
    ['sliced', sliced],
  ];
  for (const [name, m] of rows) {
    if (m === null) continue;
    console.log(
      `${name.padEnd(9)} encode+hash ${m.wallMs.toFixed(0).padStart(7)} ms, ${String(m.slices).padStart(5)} slices, ` +
        `longest step ${m.maxStepCpuMs.toFixed(1)} ms CPU, longest GC ${m.maxGcMs.toFixed(1)} ms, ` +
        `event-loop delay max ${m.maxDelayMs.toFixed(1)} ms, p99 ${m.p99DelayMs.toFixed(1)} ms`,
    );
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
