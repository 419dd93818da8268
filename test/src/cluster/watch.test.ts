// Proves the streaming watch across a leader failure on a real three-node cluster: a client.watch() connected to the leader, which is SIGKILLed mid-stream while writes go on, resumes on another node and yields every committed change exactly once, in log order (the committed set is read back from the cluster afterwards); and the CLI `tenure watch --json` prints changes as they come.
import t from 'tap';
import { TenureClient, TenureError, type WatchEvent } from '@tenure/client';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { seededFloats } from '@tenure/testkit';
import { LocalCluster, REPO_ROOT } from '../support/cluster.js';

const SEED = Number(process.env['TENURE_TEST_SEED'] ?? 0x5eed11);
/** Puts before and after the kill. */
const PUTS_EACH_SIDE = 15;
/** Generous bound on waiting for the watch to catch up on a loaded machine. */
const CATCH_UP_MS = 120_000;

t.test('streaming watch on a real cluster', async (t) => {
  t.setTimeout(300_000);
  t.comment(`seed ${SEED}`);
  const random = seededFloats(SEED);
  const cluster = await LocalCluster.start();
  t.teardown(() => cluster.teardown());
  const leader = await cluster.leader();
  const leaderUrl = cluster.node(leader).url;
  const others = cluster.nodes.filter((n) => n.id !== leader).map((n) => n.url);

  t.test(
    'a watch resumed on another node after its leader dies misses and repeats nothing',
    async (t) => {
      const writer = new TenureClient({
        endpoints: cluster.nodes.map((n) => n.url),
        random,
        requestTimeoutMs: 20_000,
      });
      const start = await writer.kv.put('fo-start', 0);
      // The watch client tries the leader first, so its stream is on the node that will die.
      const watcher = new TenureClient({ endpoints: [leaderUrl, ...others], random });
      const stop = new AbortController();
      const seen: WatchEvent[] = [];
      const waiters = new Set<() => void>();
      const consumed = (async () => {
        for await (const e of watcher.watch({
          prefix: 'fo-',
          kinds: ['kv'],
          fromRevision: start.revision,
          signal: stop.signal,
          idleTimeoutMs: 10_000,
        })) {
          seen.push(e);
          for (const w of [...waiters]) w();
        }
      })();
      const waitSeen = (check: () => boolean): Promise<void> =>
        new Promise((resolve, reject) => {
          const timer = setTimeout(
            () => reject(new Error(`watch saw ${seen.length}`)),
            CATCH_UP_MS,
          );
          const run = (): void => {
            if (!check()) return;
            clearTimeout(timer);
            waiters.delete(run);
            resolve();
          };
          waiters.add(run);
          run();
        });

      const write = async (i: number): Promise<void> => {
        try {
          await writer.kv.put(`fo-${i}`, i);
        } catch (error) {
          // Outcome unknown during the failover: the read-back below decides whether it committed.
          if (!(error instanceof TenureError)) throw error;
        }
      };
      for (let i = 0; i < PUTS_EACH_SIDE; i++) await write(i);
      await waitSeen(() => seen.length >= 1);
      await cluster.kill(leader, 'SIGKILL');
      for (let i = PUTS_EACH_SIDE; i < 2 * PUTS_EACH_SIDE; i++) await write(i);

      const committed: { name: string; revision: number }[] = [];
      for (let i = 0; i < 2 * PUTS_EACH_SIDE; i++) {
        const view = await writer.kv.get(`fo-${i}`);
        if (view !== null) committed.push({ name: `fo-${i}`, revision: view.revision });
      }
      committed.sort((a, b) => a.revision - b.revision);
      t.ok(committed.length >= PUTS_EACH_SIDE, `${committed.length} puts committed`);
      const lastRevision = committed.at(-1)!.revision;
      await waitSeen(() => seen.some((e) => e.revision >= lastRevision));
      stop.abort();
      await consumed;
      t.same(
        seen.map((e) => ({ name: e.name, revision: e.revision })),
        committed,
        'every committed change exactly once, in order',
      );
      t.ok(seen.every((e) => e.type === 'put' && e.kind === 'kv'));
      await cluster.restart(leader);
    },
  );

  t.test('tenure watch --json prints changes as they come', async (t) => {
    const endpoints = cluster.running().map((id) => cluster.node(id).url);
    const writer = new TenureClient({ endpoints, random, requestTimeoutMs: 20_000 });
    const start = await writer.kv.put('cli-start', 0);
    const child = spawn(
      process.execPath,
      [
        join(REPO_ROOT, 'packages', 'client', 'bin', 'tenure.js'),
        '--endpoints',
        endpoints.join(','),
        '--json',
        'watch',
        '--prefix',
        'cli-',
        '--from-revision',
        String(start.revision),
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    t.teardown(() => void child.kill('SIGKILL'));
    const exited = new Promise<number | null>((resolve) =>
      child.on('exit', (code) => resolve(code)),
    );
    const lines: string[] = [];
    const firstLine = new Promise<void>((resolve) => {
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', (text: string) => {
        lines.push(...text.split('\n').filter((l) => l.length > 0));
        if (lines.length >= 1) resolve();
      });
    });
    const put = await writer.kv.put('cli-a', { n: 1 });
    await firstLine;
    child.kill('SIGINT');
    t.equal(await exited, 0, 'Ctrl-C ends it cleanly');
    t.same(JSON.parse(lines[0]!), {
      revision: put.revision,
      kind: 'kv',
      name: 'cli-a',
      type: 'put',
      value: { n: 1 },
    });
  });
});
