// Proves the local-cluster launcher (npm start) runs three node processes, survives one node's death (logging it with the full restart command), restarts one node with --only, takes a fourth node added with the documented --join command (no --cluster-id), starts empty nodes after the others so `--nodes 5` on three-node data leaves three voters (the new nodes refuse, with no restart hint), stops everything quietly on SIGINT, stops everything on a SIGTERM to `npm start` (no process, no port left), refuses taken or overlapping ports before starting anything, and that `npx tenure-server --help` works.
import t from 'tap';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePorts } from '@tenure/testkit';
import { REPO_ROOT } from '../support/cluster.js';

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

/** Whether 127.0.0.1:`port` can be listened on now. */
function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen({ host: '127.0.0.1', port, exclusive: true }, () => s.close(() => resolve(true)));
  });
}

/** First port of `count` consecutive free ports, found from OS-allocated ports (not fixed ones). */
async function portRun(count: number, avoid: readonly number[] = []): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const [base] = await freePorts(1);
    if (base! + count > 65535 || avoid.some((p) => p >= base! && p < base! + count)) continue;
    const all = await Promise.all(Array.from({ length: count }, (_, i) => portFree(base! + i)));
    if (all.every(Boolean)) return base!;
  }
  throw new Error(`no ${count} consecutive free ports found`);
}

/** Two free runs of three ports (HTTP, Raft) that do not overlap. */
async function layoutPorts(): Promise<[number, number]> {
  const http = await portRun(3);
  const raft = await portRun(3, [http, http + 1, http + 2]);
  return [http, raft];
}

/** Spawned process with every output line collected. */
function run(cmd: string, args: string[], cwd?: string) {
  const lines: string[] = [];
  const onLine = new Set<() => void>();
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], cwd });
  const feed = (chunk: Buffer): void => {
    lines.push(...chunk.toString('utf8').split('\n'));
    for (const fn of [...onLine]) fn();
  };
  child.stdout.on('data', feed);
  child.stderr.on('data', feed);
  const closed = new Promise<number | null>((r) => child.once('close', (code) => r(code)));
  return { child, lines, onLine, closed };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

t.test('launcher lifecycle', async (t) => {
  const [httpPort, raftPort] = await layoutPorts();
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

  await waitForLine(lines, onLine, /Tenure local cluster is up; leader n\d/, 120_000);
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

  const only = run(process.execPath, [
    LAUNCHER,
    ...['--only', 'n3', '--http-port', String(httpPort), '--raft-port', String(raftPort)],
    ...['--data-dir', dataDir, '--', '--log-level', 'warn'],
  ]);
  t.teardown(() => {
    if (only.child.exitCode === null) only.child.kill('SIGKILL');
  });
  // The --only launcher says "up" once n3 answers as itself (node id and this cluster's id).
  await waitForLine(only.lines, only.onLine, /\[launcher\] n3 is up \(cluster id /, 120_000);
  let recovered = false;
  const until = Date.now() + 60_000;
  while (!recovered && Date.now() < until) {
    try {
      const r = await fetch(`http://127.0.0.1:${httpPort + 2}/v1/leases/demo?consistency=stale`);
      recovered = r.status === 200 && ((await r.json()) as { holder?: string }).holder === 'me';
    } catch {
      // starting
    }
    if (!recovered) await new Promise((r) => setTimeout(r, 100));
  }
  t.ok(recovered, 'n3 restarted alone with --only and caught up from its data');

  // The fourth-node command of docs/operations.md, without --cluster-id: it takes the cluster's id.
  const [n4Http, n4Raft] = await freePorts(2);
  const n4Args = [
    join(REPO_ROOT, 'packages', 'server', 'dist', 'main.js'),
    ...['--id', 'n4', '--http', `127.0.0.1:${n4Http}`, '--raft', `127.0.0.1:${n4Raft}`],
    ...['--data-dir', join(dataDir, 'n4'), '--join', `http://127.0.0.1:${httpPort}`],
    ...['--log-level', 'warn'],
  ];
  const n4 = run(process.execPath, n4Args);
  t.teardown(() => {
    if (n4.child.exitCode === null) n4.child.kill('SIGKILL');
  });
  let n4Ready = 0;
  for (let i = 0; i < 1200 && n4Ready !== 200 && n4.child.exitCode === null; i++) {
    n4Ready = (await fetch(`http://127.0.0.1:${n4Http}/readyz`).catch(() => ({ status: 0 })))
      .status;
    if (n4Ready !== 200) await new Promise((r) => setTimeout(r, 100));
  }
  t.equal(n4Ready, 200, `n4 joined and caught up: ${n4.lines.join('\n').slice(-400)}`);
  const promote = await fetch(`http://127.0.0.1:${httpPort}/v1/cluster/members/n4/promote`, {
    method: 'POST',
  });
  t.equal(promote.status, 200, 'n4 promoted');
  n4.child.kill('SIGINT');
  await n4.closed;
  // Its disk lost, the same command must not bring the voter back empty.
  rmSync(join(dataDir, 'n4'), { recursive: true, force: true });
  const wiped = run(process.execPath, n4Args);
  t.teardown(() => {
    if (wiped.child.exitCode === null) wiped.child.kill('SIGKILL');
  });
  t.equal(await wiped.closed, 2, 'a wiped voter is refused with the same --join command');
  t.match(wiped.lines.join('\n'), /lists n4 as a voter/);
  only.child.kill('SIGINT');
  t.equal(await only.closed, 0, 'the --only launcher stops its node on Ctrl-C');

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

t.test('taken or overlapping ports: fails fast, says why, starts nothing', async (t) => {
  const [httpPort, raftPort] = await layoutPorts();
  const dataDir = mkdtempSync(join(tmpdir(), 'tenure-launch-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  // Another process holds n2's HTTP port.
  const holder: Server = createServer();
  await new Promise<void>((r) => holder.listen(httpPort + 1, '127.0.0.1', r));
  t.teardown(() => holder.close());
  const base = [LAUNCHER, '--data-dir', dataDir, '--http-port', String(httpPort)];
  const taken = run(process.execPath, [...base, '--raft-port', String(raftPort)]);
  t.equal(await taken.closed, 2, 'exit code 2');
  const out = taken.lines.join('\n');
  t.match(out, `cannot start: 127.0.0.1:${httpPort + 1} (n2 HTTP) is already in use`);
  t.match(out, /Is another cluster running\?/);
  t.notMatch(out, /started n\d/, 'no node was started');

  const overlap = run(process.execPath, [...base, '--raft-port', String(httpPort + 2)]);
  t.equal(await overlap.closed, 2);
  t.match(
    overlap.lines.join('\n'),
    `HTTP ports ${httpPort}-${httpPort + 2} and Raft ports ${httpPort + 2}-${httpPort + 4} overlap`,
  );

  const badEnv = spawnSync(process.execPath, [LAUNCHER], {
    env: { ...process.env, TENURE_LAUNCH_HTTP_PORT: 'x' },
    encoding: 'utf8',
  });
  t.equal(badEnv.status, 2);
  t.match(badEnv.stderr, 'invalid setting TENURE_LAUNCH_HTTP_PORT: "x" is not an integer');
});

t.test(
  'a backup every node would refuse stops the launcher before it creates anything',
  async (t) => {
    const [httpPort] = await layoutPorts();
    const dir = mkdtempSync(join(tmpdir(), 'tenure-launch-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const backup = join(dir, 'cut.tenure-snapshot');
    writeFileSync(backup, 'TENURE-SNAPSHOT 1\n{"truncated');
    const dataDir = join(dir, 'data');
    const r = spawnSync(
      process.execPath,
      [LAUNCHER, '--data-dir', dataDir, '--http-port', String(httpPort), '--restore', backup],
      { encoding: 'utf8' },
    );
    t.equal(r.status, 2, 'exit code 2');
    t.match(r.stderr, `restore refused: ${backup}`);
    t.notOk(existsSync(dataDir), 'no data directory, cluster id or node directory was created');
  },
);

t.test('a restore onto restored directories fails before starting any node', async (t) => {
  const [httpPort] = await layoutPorts();
  const dir = mkdtempSync(join(tmpdir(), 'tenure-launch-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const dataDir = join(dir, 'data');
  mkdirSync(join(dataDir, 'n2'), { recursive: true });
  writeFileSync(join(dataDir, 'n2', 'CURRENT'), 'restored earlier');
  const r = spawnSync(
    process.execPath,
    [LAUNCHER, '--data-dir', dataDir, '--http-port', String(httpPort), '--restore', 'any-file'],
    { encoding: 'utf8' },
  );
  t.equal(r.status, 2, 'exit code 2');
  t.match(r.stderr, `restore refused: data directories ${join(dataDir, 'n2')} are not empty`);
  t.notMatch(r.stdout, /started n1/, 'no node started');
});

t.test('SIGTERM to `npm start` stops the whole cluster: no process, no port left', async (t) => {
  const [httpPort, raftPort] = await layoutPorts();
  const dataDir = mkdtempSync(join(tmpdir(), 'tenure-launch-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const npm = run(
    'npm',
    [
      'start',
      '--',
      ...['--http-port', String(httpPort), '--raft-port', String(raftPort)],
      ...['--data-dir', dataDir, '--', '--log-level', 'warn'],
    ],
    REPO_ROOT,
  );
  t.teardown(() => {
    if (npm.child.exitCode === null) npm.child.kill('SIGKILL');
  });
  await waitForLine(
    npm.lines,
    npm.onLine,
    /checking the build \(tsc -b; a first build takes about a minute\)/,
    60_000,
  );
  await waitForLine(npm.lines, npm.onLine, /Tenure local cluster is up; leader n\d/, 240_000);
  const restart = await waitForLine(npm.lines, npm.onLine, /Restart one node after it stops/, 5000);
  t.match(
    restart,
    `npm run node -- <id> --http-port ${httpPort} --raft-port ${raftPort} --data-dir ${dataDir}`,
  );
  const pids = npm.lines
    .map((l) => /started n\d \(pid (\d+)\)|\[launcher\] pid (\d+)/.exec(l))
    .filter((m) => m !== null)
    .map((m) => Number(m![1] ?? m![2]));
  t.equal(pids.length, 4, 'the launcher and three nodes');

  npm.child.kill('SIGTERM');
  await npm.closed;
  t.ok(npm.lines.some((l) => l.includes('SIGTERM: stopping n1, n2, n3')));
  // The launcher exits only after its nodes did; give the OS a moment to reap them.
  for (let i = 0; i < 100 && pids.some(alive); i++) await new Promise((r) => setTimeout(r, 100));
  for (const pid of pids) t.notOk(alive(pid), `pid ${pid} is gone`);
  const ports = [0, 1, 2].flatMap((i) => [httpPort + i, raftPort + i]);
  const free = await Promise.all(ports.map(portFree));
  t.same(
    free,
    ports.map(() => true),
    'every port is free again',
  );
});

t.test('`npx tenure-server --help` and --version work after a build', async (t) => {
  const help = spawnSync('npx', ['--no-install', 'tenure-server', '--help'], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
  });
  t.equal(help.status, 0, help.stderr);
  t.match(help.stdout, 'Usage: tenure-server');
  t.match(help.stdout, /--heartbeat-ms <ms>\s+Leader heartbeat interval/);
  t.match(help.stdout, 'TENURE_HEARTBEAT_MS');
  const version = spawnSync('npx', ['--no-install', 'tenure-server', '--version'], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
  });
  t.match(version.stdout, /^\d+\.\d+\.\d+/);
  const bad = spawnSync('npx', ['--no-install', 'tenure-server', '--id', 'n1'], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    env: { ...process.env, TENURE_PEERS: 'nonsense' },
  });
  t.equal(bad.status, 2);
  t.match(bad.stderr, 'invalid setting TENURE_PEERS');
});

t.test(
  '--nodes 5 on a three-node cluster’s data: the two new nodes refuse, the voters stay three',
  async (t) => {
    const httpPort = await portRun(5);
    const raftPort = await portRun(
      5,
      Array.from({ length: 5 }, (_, i) => httpPort + i),
    );
    const dataDir = mkdtempSync(join(tmpdir(), 'tenure-launch-'));
    t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
    const launch = (extra: string[]) => {
      const l = run(process.execPath, [
        LAUNCHER,
        ...['--http-port', String(httpPort), '--raft-port', String(raftPort)],
        ...['--data-dir', dataDir, ...extra, '--', '--log-level', 'warn'],
      ]);
      t.teardown(() => {
        if (l.child.exitCode === null) l.child.kill('SIGKILL');
      });
      return l;
    };
    const three = launch([]);
    await waitForLine(three.lines, three.onLine, /Tenure local cluster is up; leader n\d/, 120_000);
    three.child.kill('SIGINT');
    t.equal(await three.closed, 0, 'the three-node cluster stopped');

    const five = launch(['--nodes', '5']);
    await waitForLine(
      five.lines,
      five.onLine,
      /n4, n5: no data yet; starting once the others answer/,
      60_000,
    );
    for (const id of ['n4', 'n5'])
      await waitForLine(
        five.lines,
        five.onLine,
        new RegExp(`${id} exited \\(code 2\\); it refused to start`),
        120_000,
      );
    t.notOk(
      five.lines.some((l) => /n[45] exited .*Restart it with/.test(l)),
      'no restart hint for a refused node',
    );
    let voters: string[] = [];
    for (let i = 0; i < 600 && voters.length === 0; i++) {
      const r = await fetch(`http://127.0.0.1:${httpPort}/v1/cluster/members`).catch(() => null);
      if (r?.status === 200)
        voters = ((await r.json()) as { members: { id: string }[] }).members.map((m) => m.id);
      else await new Promise((r) => setTimeout(r, 100));
    }
    t.same(voters.sort(), ['n1', 'n2', 'n3'], 'still three voters');
    five.child.kill('SIGINT');
    t.equal(await five.closed, 0, 'stopped');
  },
);
