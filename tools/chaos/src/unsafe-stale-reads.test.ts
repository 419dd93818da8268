// Proves the linearizability checker catches a deliberately unsafe run: the workload reads with ?consistency=stale while the leader is cut off from its peers (clients still reach it), and the checker must report at least one violation.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openSession } from './runner/session.js';
import { isolate } from './faults/partition-plan.js';
import { createTenureWorkload } from './workload/index.js';
import { cleanupLeftovers } from './topology/netns.js';
import { delay } from './util/clock.js';

const repoRoot = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../..');
const isRoot = process.getuid?.() === 0;
/** Fixed so the run replays; override with TENURE_CHAOS_SEED. */
const seed = Number(process.env['TENURE_CHAOS_SEED'] ?? 20261130) >>> 0;
/** Peer-only isolations of the current leader (BC-08's fault), each held this long, ms. */
const isolations = 2;
const holdMs = 8_000;
const gapMs = 3_000;

t.test(
  'stale reads during peer-only leader isolation are flagged',
  { skip: isRoot ? false : 'needs root (network namespaces, iptables)', timeout: 180_000 },
  async (t) => {
    cleanupLeftovers(); // runs whose owner process died (never a live run's)
    const deps = spawnSync('bash', [join(repoRoot, 'scripts/chaos-deps.sh')], { encoding: 'utf8' });
    t.equal(deps.status, 0, `scripts/chaos-deps.sh: ${deps.stdout}${deps.stderr}`);
    t.ok(
      existsSync(join(repoRoot, 'packages/server/dist/main.js')),
      'server is built (npm run build)',
    );
    const log = (line: string): void => t.comment(line);
    const session = await openSession({
      backend: 'netns',
      seed,
      outRoot: join(repoRoot, 'chaos-runs'),
      repoRoot,
      scenario: 'unsafe-stale-reads',
      log,
      searchBudgetMs: 20_000,
    });
    const stop = new AbortController();
    const workload = createTenureWorkload({
      seed,
      random: session.random.fork('workload'),
      ttlMs: 3_000,
      runDir: session.runDir,
      log,
      workload: { staleReads: true, readers: 3, finalPhaseMs: 8_000 },
    });
    try {
      await workload.start(session.cluster, session.history, stop.signal);
      await delay(gapMs);
      for (let i = 0; i < isolations; i++) {
        // Deterministic schedule instead of the random nemesis: the leader keeps serving its
        // clients from its local replica while the majority elects another leader and moves on.
        const leader = await session.cluster.waitForLeader(15_000);
        const faultId = session.faults.nextFaultId();
        await session.faults.network.add(
          faultId,
          isolate(leader, session.backend.nodeIds, [], true),
        );
        session.faults.record({
          kind: 'partition',
          action: 'inject',
          targets: [leader],
          detail: `peer-only isolate leader ${leader} (stale reads keep hitting it)`,
          faultId,
        });
        await delay(holdMs);
        await session.faults.network.remove(faultId);
        session.faults.record({
          kind: 'partition',
          action: 'heal',
          targets: [leader],
          detail: `heal ${leader}`,
          faultId,
        });
        await delay(gapMs);
      }
    } finally {
      stop.abort();
      await workload.stop();
      await session.healAll();
    }
    const result = await session.finish([], [], { keepData: false });
    t.comment(`run folder ${result.runDir} (seed ${seed})`);
    const stale = result.record.ops.filter(
      (op) =>
        (op.args as { consistency?: unknown }).consistency === 'stale' &&
        op.outcome.status === 'ok',
    );
    t.ok(stale.length > 0, `stale reads answered (${stale.length})`);
    const lin = result.verdicts.find((v) => v.checker === 'linearizability');
    t.ok(lin !== undefined, 'linearizability checker ran');
    t.ok(
      (lin?.violations.length ?? 0) >= 1,
      `linearizability flags the run: ${lin?.violations.length ?? 0} violation(s); first: ${lin?.violations[0]?.message.slice(0, 300) ?? lin?.error ?? '-'}`,
    );
  },
);
