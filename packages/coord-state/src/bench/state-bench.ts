/**
 * `npm run bench:state`: applies lease commands in-process to a CoordStateMachine holding
 * 1,000,000 live leases and prints a table of applied commands/s and heap use.
 * Targets: ≥ 200,000 applied commands/s for acquire/renew/release on 1,000,000 live leases;
 * heap for 1,000,000 live leases ≤ 600 MiB. The main rows apply envelope objects directly (as the
 * server does after decoding an entry); the "+codec" row includes encodeEnvelope/decodeEnvelope.
 * Options (`--help`; flag or env): --leases / BENCH_LEASES (default 1,000,000), --ops / BENCH_OPS
 * (mixed ops, default 1,000,000).
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { SeededRandom } from '@tenure/testkit';
import { CoordStateMachine } from '../state-machine.js';
import { decodeEnvelope, encodeEnvelope } from '../codec.js';
import type { CommandEnvelope, LeaseAcquireValue } from '../api.js';

/** commander parser of a positive integer option. */
function count(text: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 1)
    throw new InvalidArgumentError('must be a positive integer');
  return n;
}

const options = new Command('state-bench')
  .description('Applied commands/s and heap of a CoordStateMachine with many live leases.')
  .addOption(
    new Option('--leases <n>', 'live leases')
      .env('BENCH_LEASES')
      .argParser(count)
      .default(1_000_000),
  )
  .addOption(
    new Option('--ops <n>', 'mixed operations')
      .env('BENCH_OPS')
      .argParser(count)
      .default(1_000_000),
  )
  .parse()
  .opts<{ leases: number; ops: number }>();
const LEASES = options.leases;
const MIXED_OPS = options.ops;
const TTL_MS = 3_600_000;
const MIB = 1024 * 1024;

interface Row {
  phase: string;
  ops: number;
  /** Wall-clock seconds. */
  seconds: number;
  /** CPU seconds of this process (user + system): the machine is shared, so wall time overstates cost. */
  cpuSeconds: number;
  note: string;
}

function heapMiB(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc) {
    gc();
    gc();
  }
  return process.memoryUsage().heapUsed / MIB;
}

function main(): void {
  const rows: Row[] = [];
  const baseHeap = heapMiB();
  const sm = new CoordStateMachine({
    leasesMax: Math.max(2_000_000, LEASES * 2),
    historyNamesMax: 100_000,
  });
  const names: string[] = Array.from({ length: LEASES }, (_, i) => `lease-${i}`);
  const holders: string[] = Array.from({ length: LEASES }, (_, i) => `host-${i % 5000}:pid-${i}`);
  const tokens = new Float64Array(LEASES);
  let index = 0;
  let nowMs = 0;
  const env = (command: CommandEnvelope['command']): CommandEnvelope => ({
    v: 1,
    command,
    idempotency: null,
  });
  const tick = (): void => {
    if ((index & 1023) === 0) nowMs++;
  };
  const timed = (phase: string, ops: number, note: string, fn: () => void): void => {
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    fn();
    const c1 = process.cpuUsage(c0);
    rows.push({
      phase,
      ops,
      seconds: (performance.now() - t0) / 1000,
      cpuSeconds: (c1.user + c1.system) / 1e6,
      note,
    });
  };

  timed('acquire (new grants)', LEASES, 'names 0..N-1 free → granted', () => {
    for (let i = 0; i < LEASES; i++) {
      tick();
      const out = sm.apply(
        ++index,
        nowMs,
        env({
          type: 'lease.acquire',
          name: names[i]!,
          holder: holders[i]!,
          ttlMs: TTL_MS,
          waitMs: 0,
          lockDelayMs: 0,
          maxHoldMs: null,
        }),
      );
      if (!out.result.ok) throw new Error(`acquire failed: ${JSON.stringify(out.result)}`);
      tokens[i] = (
        out.result.value as Extract<LeaseAcquireValue, { kind: 'granted' }>
      ).fencingToken;
    }
  });
  const heapLive = heapMiB() - baseHeap;
  const counts = sm.counts();
  if (counts.leases !== LEASES)
    throw new Error(`expected ${LEASES} live leases, have ${counts.leases}`);

  const random = new SeededRandom(12345); // names are picked by the bench, not the state machine
  const pick = (): number => random.nextU32();
  timed('renew', LEASES, `random names, ${LEASES.toLocaleString()} live`, () => {
    for (let n = 0; n < LEASES; n++) {
      tick();
      const i = pick() % LEASES;
      const out = sm.apply(
        ++index,
        nowMs,
        env({
          type: 'lease.renew',
          name: names[i]!,
          holder: holders[i]!,
          fencingToken: tokens[i]!,
        }),
      );
      if (!out.result.ok) throw new Error(`renew failed: ${JSON.stringify(out.result)}`);
    }
  });

  timed(
    'release + re-acquire',
    MIXED_OPS,
    `pairs on random names, ${LEASES.toLocaleString()} live`,
    () => {
      for (let n = 0; n < MIXED_OPS; n += 2) {
        tick();
        const i = pick() % LEASES;
        const rel = sm.apply(
          ++index,
          nowMs,
          env({
            type: 'lease.release',
            name: names[i]!,
            holder: holders[i]!,
            fencingToken: tokens[i]!,
          }),
        );
        if (!rel.result.ok) throw new Error(`release failed: ${JSON.stringify(rel.result)}`);
        const acq = sm.apply(
          ++index,
          nowMs,
          env({
            type: 'lease.acquire',
            name: names[i]!,
            holder: holders[i]!,
            ttlMs: TTL_MS,
            waitMs: 0,
            lockDelayMs: 0,
            maxHoldMs: null,
          }),
        );
        if (!acq.result.ok) throw new Error(`acquire failed: ${JSON.stringify(acq.result)}`);
        tokens[i] = (
          acq.result.value as Extract<LeaseAcquireValue, { kind: 'granted' }>
        ).fencingToken;
      }
    },
  );

  const mixedOne = (i: number, k: number): CommandEnvelope => {
    switch (k % 3) {
      case 0:
        return env({
          type: 'lease.renew',
          name: names[i]!,
          holder: holders[i]!,
          fencingToken: tokens[i]!,
        });
      case 1:
        return env({
          type: 'lease.acquire',
          name: names[i]!,
          holder: `other-${k}`,
          ttlMs: TTL_MS,
          waitMs: 0,
          lockDelayMs: 0,
          maxHoldMs: null,
        }); // held
      default:
        return env({
          type: 'lease.acquire',
          name: names[i]!,
          holder: holders[i]!,
          ttlMs: TTL_MS,
          waitMs: 0,
          lockDelayMs: 0,
          maxHoldMs: null,
        }); // renew by acquire
    }
  };
  timed('mixed renew/held/re-acquire', MIXED_OPS, 'direct envelopes', () => {
    for (let n = 0; n < MIXED_OPS; n++) {
      tick();
      sm.apply(++index, nowMs, mixedOne(pick() % LEASES, n));
    }
  });
  timed('mixed, +codec', MIXED_OPS, 'encodeEnvelope + decodeEnvelope each', () => {
    for (let n = 0; n < MIXED_OPS; n++) {
      tick();
      sm.apply(++index, nowMs, decodeEnvelope(encodeEnvelope(mixedOne(pick() % LEASES, n))));
    }
  });

  timed('release (all)', LEASES, `down to 0 live`, () => {
    for (let i = 0; i < LEASES; i++) {
      tick();
      const out = sm.apply(
        ++index,
        nowMs,
        env({
          type: 'lease.release',
          name: names[i]!,
          holder: holders[i]!,
          fencingToken: tokens[i]!,
        }),
      );
      if (!out.result.ok) throw new Error(`release failed: ${JSON.stringify(out.result)}`);
    }
  });

  // Expiry: 200k leases with short ttls, expired by null entries as the leader would propose them.
  const expiring = Math.min(LEASES, 200_000);
  for (let i = 0; i < expiring; i++) {
    tick();
    sm.apply(
      ++index,
      nowMs,
      env({
        type: 'lease.acquire',
        name: names[i]!,
        holder: holders[i]!,
        ttlMs: 100 + (i % 1000),
        waitMs: 0,
        lockDelayMs: 0,
        maxHoldMs: null,
      }),
    );
  }
  timed('expiry', expiring, 'leases expired via nextDueMs() entries', () => {
    let due = sm.nextDueMs();
    while (due !== null) {
      nowMs = Math.max(nowMs, due);
      sm.apply(++index, nowMs, null);
      due = sm.nextDueMs();
    }
  });
  sm.checkInvariants();

  const pad = (s: string, n: number): string => s.padEnd(n);
  const lines = [
    `coord-state bench — ${LEASES.toLocaleString()} leases, node ${process.version}${(globalThis as { gc?: unknown }).gc ? '' : ' (no --expose-gc: heap includes garbage)'}`,
    '',
    `${pad('phase', 30)}${pad('ops', 12)}${pad('wall s', 9)}${pad('ops/s', 12)}${pad('cpu s', 9)}${pad('ops/cpu-s', 12)}note`,
    ...rows.map(
      (r) =>
        `${pad(r.phase, 30)}${pad(r.ops.toLocaleString(), 12)}${pad(r.seconds.toFixed(2), 9)}${pad(Math.round(r.ops / r.seconds).toLocaleString(), 12)}${pad(r.cpuSeconds.toFixed(2), 9)}${pad(Math.round(r.ops / r.cpuSeconds).toLocaleString(), 12)}${r.note}`,
    ),
    '',
    `heap for ${LEASES.toLocaleString()} live leases: ${heapLive.toFixed(0)} MiB (target ≤ 600 MiB; includes the bench's name/holder strings kept by the state)`,
    `target ≥ 200,000 applied commands/s for acquire/renew/release`,
  ];
  console.log(lines.join('\n'));
}

main();
