// Proves the local-cluster launcher (npm start) runs three node processes, survives one node's death (logging it with the full restart command), restarts one node with --only, and stops everything quietly on SIGINT.
import t from 'tap';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { allocatePorts, REPO_ROOT } from '../support/cluster.js';

const LAUNCHER = join(REPO_ROOT, 'packages', 'server', 'dist', 'cluster', 'launcher.js');

/** Resolves with the first output line matching `re`, rejects after `timeoutMs`. */
function waitForLine(
  lines: string[],
  onLine: Set<() => void>,
  re: RegExp,
  timeoutMs: number,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const check = (): boolean => {
      const hit = lines.find((l) => re.test(l));
      if (hit === undefined) return false;
      onLine.delete(check2);
      clearTimeout(timer);
      resolve(hit);
      return true;
    };
    const check2 = (): void => void check();
    const timer = setTimeout(() => {
      onLine.delete(check2);
      reject(new Error(`no line matching ${re} within ${timeoutMs} ms`));
    }, timeoutMs);
    if (!check()) onLine.add(check2);
  });
}

t.test('launcher lifecycle', async (t) => {
  // Two runs of three consecutive ports: pick a base whose neighbours are free (best effort).
  const [a, b] = await allocatePorts(2);
  const httpPort = 20000 + (a! % 20000);
  const raftPort = 40000 + (b! % 20000);
  const dataDir = mkdtempSync(join(tmpdir(), 'tenure-launch-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const args = [
    LAUNCHER,
    '--http-port',
    String(httpPort),
    '--raft-port',
    String(raftPort),
    '--data-dir',
    dataDir,
    '--',
    '--log-level',
    'warn',
  ];
  const lines: string[] = [];
  const onLine = new Set<() => void>();
  const launcher = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  t.teardown(() => {
    if (launcher.exitCode === null) launcher.kill('SIGKILL');
  });
  const feed = (chunk: Buffer): void => {
    lines.push(...chunk.toString('utf8').split('\n'));
    for (const fn of [...onLine]) fn();
  };
  launcher.stdout.on('data', feed);
  launcher.stderr.on('data', feed);

  await waitForLine(lines, onLine, /Tenure local cluster is up; leader n\d/, 30_000);
  const pids = lines.map((l) => /started (n\d) \(pid (\d+)\)/.exec(l)).filter((m) => m !== null);
  t.equal(pids.length, 3, 'three node processes');
  await waitForLine(
    lines,
    onLine,
    new RegExp(`curl -s -X POST http://127\\.0\\.0\\.1:${httpPort}/v1/leases/demo/acquire`),
    5000,
  );
  t.pass('prints a first curl command');
  const acq = await fetch(`http://127.0.0.1:${httpPort}/v1/leases/demo/acquire`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ holder: 'me', ttlMs: 60000 }),
  });
  t.equal(acq.status, 200);

  const victim = pids.find((m) => m![1] === 'n3')!;
  process.kill(Number(victim[2]), 'SIGKILL');
  const exitLine = await waitForLine(
    lines,
    onLine,
    /n3 exited \(SIGKILL\); the other nodes keep running\. Restart it with: npm run node -- n3/,
    10_000,
  );
  t.ok(
    exitLine.endsWith(
      `npm run node -- n3 --http-port ${httpPort} --raft-port ${raftPort} --data-dir ${dataDir} -- --log-level warn`,
    ),
    `the restart command keeps the launcher's flags: ${exitLine}`,
  );
  t.equal(launcher.exitCode, null, 'the launcher keeps running');
  // n3 may have been the leader: the other two elect a new one and keep serving.
  let still = 0;
  for (let i = 0; i < 100 && still !== 200; i++) {
    still = (
      await fetch(`http://127.0.0.1:${httpPort + 1}/v1/leases/demo`).catch(() => ({ status: 0 }))
    ).status;
    if (still !== 200) await new Promise((r) => setTimeout(r, 100));
  }
  t.equal(still, 200, 'the other two nodes keep serving');

  const only = spawn(
    process.execPath,
    [
      LAUNCHER,
      '--only',
      'n3',
      '--http-port',
      String(httpPort),
      '--raft-port',
      String(raftPort),
      '--data-dir',
      dataDir,
      '--',
      '--log-level',
      'warn',
    ],
    { stdio: 'ignore' },
  );
  t.teardown(() => {
    if (only.exitCode === null) only.kill('SIGKILL');
  });
  let recovered = false;
  for (let i = 0; i < 100 && !recovered; i++) {
    try {
      const r = await fetch(`http://127.0.0.1:${httpPort + 2}/v1/leases/demo?consistency=stale`);
      recovered = r.status === 200 && ((await r.json()) as { holder?: string }).holder === 'me';
    } catch {
      // starting
    }
    if (!recovered) await new Promise((r) => setTimeout(r, 100));
  }
  t.ok(recovered, 'n3 restarted alone with --only and caught up from its data');
  const onlyExit = new Promise((r) => only.once('exit', r));
  only.kill('SIGINT');
  await onlyExit;

  const exited = new Promise<number | null>((r) => launcher.once('close', (code) => r(code)));
  launcher.kill('SIGINT');
  t.equal(await exited, 0, 'Ctrl-C stops the cluster cleanly');
  t.ok(lines.some((l) => l.includes('all nodes stopped')));
  t.notOk(
    lines.some((l) => l.includes('leadership transfer failed')),
    'a whole-cluster stop skips the leadership transfer (no "transfer failed" warnings)',
  );
  for (const m of pids) {
    let alive = true;
    try {
      process.kill(Number(m![2]), 0);
    } catch {
      alive = false;
    }
    t.notOk(alive, `${m![1]} is gone`);
  }
});
