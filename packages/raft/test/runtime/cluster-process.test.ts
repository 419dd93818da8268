// Proves the runtime works across real processes: three demo nodes on loopback (TCP transport,
// level storage with fsync) elect a leader and replicate; SIGKILL of the leader yields a new leader
// that lost no acknowledged entry; the killed node restarts from its own disk and catches up.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { freePorts, pollUntil } from '@tenure/testkit';
import type { RaftStatus } from '../../src/api.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
const demoNode = path.join(repoRoot, 'packages/raft/src/bench/demo-node.ts');
const deadlineMs = 30_000;
const ids = ['n1', 'n2', 'n3'];

const until = <T>(probe: () => Promise<T>, what: string) =>
  pollUntil(what, probe, { timeoutMs: deadlineMs, intervalMs: 20 });

interface Proc {
  child: ChildProcess;
  controlPort: number;
}

const base = (p: Proc) => `http://127.0.0.1:${p.controlPort}`;
const status = async (p: Proc) => (await (await fetch(`${base(p)}/status`)).json()) as RaftStatus;
const applied = async (p: Proc) =>
  (await (await fetch(`${base(p)}/applied`)).json()) as { count: number; values: string[] };
async function propose(p: Proc, value: string): Promise<{ index: number }> {
  const res = await fetch(`${base(p)}/propose`, {
    method: 'POST',
    body: JSON.stringify({ value }),
  });
  if (res.status !== 200) throw new Error(`propose ${value}: ${res.status} ${await res.text()}`);
  return (await res.json()) as { index: number };
}

t.test(
  'three processes: replicate, survive SIGKILL of the leader, restart from disk',
  async (t) => {
    const dir = t.testdir();
    const ports = await freePorts(3);
    const peers = ids.map((id, i) => ({ id, raftAddress: `127.0.0.1:${ports[i]}` }));
    const procs = new Map<string, Proc>();

    const start = async (id: string): Promise<Proc> => {
      const config = {
        id,
        clusterId: 'proc-test',
        peers,
        dataDir: path.join(dir, id),
        recordValues: true,
        electionTimeoutMs: 500,
        heartbeatMs: 50,
      };
      const child = spawn(process.execPath, ['--import', 'tsx', demoNode, JSON.stringify(config)], {
        cwd: repoRoot,
        env: { ...process.env, LOG_LEVEL: 'info' },
        stdio: ['ignore', 'pipe', fs.openSync(path.join(dir, `${id}.log`), 'a')],
      });
      const line = await new Promise<string>((resolve, reject) => {
        readline.createInterface({ input: child.stdout! }).once('line', resolve);
        child.once('exit', (code) =>
          reject(new Error(`${id} exited with ${code} before ready; see ${id}.log`)),
        );
      });
      const proc = {
        child,
        controlPort: (JSON.parse(line) as { controlPort: number }).controlPort,
      };
      procs.set(id, proc);
      return proc;
    };
    const kill = async (id: string): Promise<void> => {
      const proc = procs.get(id)!;
      procs.delete(id);
      const exited = new Promise((r) => proc.child.once('exit', r));
      proc.child.kill('SIGKILL');
      await exited;
    };
    t.teardown(async () => {
      for (const id of [...procs.keys()]) await kill(id);
    });
    /** The leader all given processes agree on. */
    const agreedLeader = (members: string[]) =>
      until(
        async () => {
          const statuses = await Promise.all(members.map((id) => status(procs.get(id)!)));
          const leader = statuses.find((s) => s.role === 'leader');
          return leader !== undefined && statuses.every((s) => s.leaderId === leader.id)
            ? leader
            : undefined;
        },
        `leader agreed by ${members.join(',')}`,
      );

    await Promise.all(ids.map(start));
    const first = await agreedLeader(ids);
    t.pass(`leader ${first.id} in term ${first.term}`);

    const acked: string[] = [];
    for (let i = 0; i < 30; i++) {
      await propose(procs.get(first.id)!, `a${i}`);
      acked.push(`a${i}`);
    }
    await until(
      async () =>
        (
          await Promise.all(ids.map(async (id) => (await applied(procs.get(id)!)).count === 30))
        ).every(Boolean),
      'all applied 30',
    );

    await kill(first.id);
    const survivors = ids.filter((id) => id !== first.id);
    const second = await agreedLeader(survivors);
    t.not(second.id, first.id, 'a new leader');
    t.ok(second.term > first.term, 'in a later term');
    for (let i = 0; i < 10; i++) {
      await propose(procs.get(second.id)!, `b${i}`);
      acked.push(`b${i}`);
    }
    const afterFailover = await applied(procs.get(second.id)!);
    t.same(afterFailover.values, acked, 'no acknowledged entry lost, order kept');

    await start(first.id);
    const caughtUp = await until(async () => {
      const a = await applied(procs.get(first.id)!);
      return a.count === acked.length ? a : undefined;
    }, 'restarted node catches up');
    t.same(caughtUp.values, acked, 'restarted node has the same sequence');
    const startLines = fs
      .readFileSync(path.join(dir, `${first.id}.log`), 'utf8')
      .split('\n')
      .filter((line) => line.includes('"raft node started"'))
      .map((line) => JSON.parse(line) as { lastIndex: number });
    t.equal(startLines.length, 2, 'the node started twice');
    t.ok(startLines[1]!.lastIndex >= 30, 'the second start recovered its log from its own disk');
    const restarted = await status(procs.get(first.id)!);
    t.equal(restarted.leaderId, second.id, 'restarted node follows the new leader');
  },
);
