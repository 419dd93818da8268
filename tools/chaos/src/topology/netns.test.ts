// Proves the netns topology works as the faults need it: nodes reachable from the root namespace,
// peer-only and client-only blocks cut exactly the links they name, netem delays, SIGSTOP/SIGCONT
// and SIGKILL+restart act on the real node process, a wipe empties a stopped node's data and starts
// a new data generation (and a start may --join), teardown/cleanup leave nothing behind, and a
// cleanup (in any process) removes only runs whose owner is verifiably dead.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NetnsCluster, findLibfaketime } from './netns-cluster.js';
import { cleanupLeftovers, netemArgs } from './netns.js';
import { currentOwner, readProcStat } from './run-owner.js';
import { tenureServerCommand, type NodeCommandBuilder } from './node-command.js';
import { httpJson, HttpTransportError } from '../util/http.js';
import { run } from '../util/exec.js';

// A trivial node: GET / answers its id; GET /probe?url=U fetches U from inside the namespace
// (to test node-to-node links) and answers the status or the error.
const fakeNodeSource = `
const http = require('node:http');
const [id, address, join] = process.argv.slice(1);
const [host, port] = address.split(':');
http.createServer((req, res) => {
  const url = new URL(req.url, 'http://x');
  if (url.pathname === '/probe') {
    const probe = http.get(url.searchParams.get('url'), { timeout: 500 }, (r) => { r.resume(); res.end(JSON.stringify({ ok: true, status: r.statusCode })); });
    probe.on('timeout', () => { probe.destroy(); res.end(JSON.stringify({ ok: false, error: 'timeout' })); });
    probe.on('error', (e) => { if (!res.writableEnded) res.end(JSON.stringify({ ok: false, error: e.code })); });
    return;
  }
  if (url.pathname === '/time') return res.end(JSON.stringify({ dateMs: Date.now(), perfMs: performance.now() }));
  res.end(JSON.stringify({ id, pid: process.pid, join: join || null }));
}).listen(Number(port), host);
`;

const fakeNode: NodeCommandBuilder = (spec) => ({
  file: process.execPath,
  args: ['-e', fakeNodeSource, spec.id, spec.httpAddress, spec.join ?? ''],
  env: {},
});

const isRoot = process.getuid?.() === 0;
/** The `@tenure/test` workspace (tsx resolves from there for child processes). */
const testWorkspace = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../..');

t.test('netemArgs builds tc netem arguments', async (t) => {
  t.same(netemArgs({ delayMs: 50, jitterMs: 10, lossPercent: 5 }), [
    'delay',
    '50ms',
    '10ms',
    'distribution',
    'normal',
    'loss',
    '5%',
  ]);
  t.same(netemArgs({ reorderPercent: 20 }), ['delay', '1ms', 'reorder', '20%', '50%']);
  t.same(netemArgs({}), []);
});

t.test('the server command names the voters with --peers, or joins with --join', async (t) => {
  const member = { id: 'n1', raftAddress: '10.0.0.1:7101', httpAddress: '10.0.0.1:7001' };
  const spec = {
    id: 'n1',
    httpAddress: member.httpAddress,
    raftAddress: member.raftAddress,
    members: [member],
    dataDir: '/data/n1',
  };
  const build = tenureServerCommand('/repo');
  const plain = build(spec).args;
  t.equal(plain[plain.indexOf('--peers') + 1], 'n1=10.0.0.1:7101@10.0.0.1:7001');
  t.notOk(plain.includes('--join'));
  const joining = build({ ...spec, join: 'http://10.0.0.2:7002' }).args;
  t.equal(joining[joining.indexOf('--join') + 1], 'http://10.0.0.2:7002');
  t.notOk(joining.includes('--peers'), '--join instead of --peers');
  t.ok(joining.includes('--http') && joining.includes('--raft'), 'what --join needs');
});

t.test(
  'namespaced cluster of trivial servers',
  { skip: isRoot ? false : 'needs root (network namespaces)' },
  async (t) => {
    const runDir = mkdtempSync(join(tmpdir(), 'tenure-netns-test-'));
    const cluster = await NetnsCluster.create({ runDir, command: fakeNode, clientCount: 2 });
    t.teardown(async () => {
      await cluster.down();
      rmSync(runDir, { recursive: true, force: true });
    });
    await cluster.up();
    const [e1, e2, e3] = cluster.endpoints();
    if (e1 === undefined || e2 === undefined || e3 === undefined)
      throw new Error('expected three endpoints');

    // Wait until each fake node listens (bounded polling, not a sleep).
    const get = (url: string, localAddress: string | null = null, timeoutMs = 1000) =>
      httpJson('GET', url, undefined, { timeoutMs, localAddress });
    for (const e of [e1, e2, e3]) {
      for (let attempt = 0; ; attempt++) {
        try {
          await get(`${e.httpUrl}/`);
          break;
        } catch (error) {
          if (attempt > 100) throw error;
          await new Promise((r) => setTimeout(r, 50));
        }
      }
    }

    await t.test('every node answers from the root namespace with its own id', async (t) => {
      for (const e of [e1, e2, e3]) t.match((await get(`${e.httpUrl}/`)).json, { id: e.id });
    });

    await t.test('nodes reach each other over the bridge', async (t) => {
      t.match((await get(`${e1.httpUrl}/probe?url=${e2.httpUrl}/`)).json, {
        ok: true,
        status: 200,
      });
    });

    await t.test('a peer-only block cuts n1<->n2 but keeps clients and n3', async (t) => {
      await cluster.setBlocks([
        { from: 'n1', to: 'n2' },
        { from: 'n2', to: 'n1' },
      ]);
      t.match((await get(`${e1.httpUrl}/probe?url=${e2.httpUrl}/`)).json, { ok: false });
      t.match((await get(`${e2.httpUrl}/probe?url=${e1.httpUrl}/`)).json, { ok: false });
      t.match((await get(`${e1.httpUrl}/probe?url=${e3.httpUrl}/`)).json, { ok: true });
      t.match((await get(`${e1.httpUrl}/`)).json, { id: 'n1' });
      t.match((await get(`${e2.httpUrl}/`)).json, { id: 'n2' });
      await cluster.setBlocks([]);
      t.match((await get(`${e1.httpUrl}/probe?url=${e2.httpUrl}/`)).json, { ok: true });
    });

    await t.test('a client block cuts only that client address', async (t) => {
      const c1 = cluster.clientAddresses.find((c) => c.id === 'c1');
      t.ok(c1?.localAddress);
      await cluster.setBlocks([{ from: 'c1', to: 'n1' }]);
      await t.rejects(get(`${e1.httpUrl}/`, c1!.localAddress, 300), HttpTransportError);
      t.match((await get(`${e1.httpUrl}/`)).json, { id: 'n1' });
      t.match((await get(`${e2.httpUrl}/`, c1!.localAddress)).json, { id: 'n2' });
      await cluster.setBlocks([]);
      t.match((await get(`${e1.httpUrl}/`, c1!.localAddress)).json, { id: 'n1' });
    });

    await t.test(
      'netem delay is installed on the node egress and delays answers',
      { skip: cluster.capabilities.netemDelay ? false : 'kernel has no netem qdisc' },
      async (t) => {
        await cluster.setNetem('n3', { delayMs: 150 });
        const ns = cluster.topology.node('n3').namespace;
        t.match(
          await run('ip', ['netns', 'exec', ns, 'tc', 'qdisc', 'show', 'dev', 'eth0']),
          /netem.*delay 150ms/,
        );
        const startMs = performance.now();
        await get(`${e3.httpUrl}/`);
        // netem never delivers early: a handshake plus a response each cross the delayed egress.
        t.ok(performance.now() - startMs >= 150, 'answer took at least the netem delay');
        await cluster.setNetem('n3', null);
        t.notMatch(
          await run('ip', ['netns', 'exec', ns, 'tc', 'qdisc', 'show', 'dev', 'eth0']),
          /netem/,
        );
      },
    );

    await t.test('loss and rate degradation install and clear', async (t) => {
      const ns = cluster.topology.node('n3').namespace;
      // 100% loss on n3's egress: no answer reaches the client; clearing restores it.
      await cluster.setNetem('n3', { lossPercent: 100 });
      await t.rejects(get(`${e3.httpUrl}/`, null, 300), {
        name: 'HttpTransportError',
        message: /no answer/,
      });
      await cluster.setNetem('n3', { rateKbit: 512 });
      t.match(
        await run('ip', ['netns', 'exec', ns, 'tc', 'qdisc', 'show', 'dev', 'eth0']),
        cluster.capabilities.netemDelay ? /netem/ : /tbf/,
      );
      t.match((await get(`${e3.httpUrl}/`)).json, { id: 'n3' });
      await cluster.setNetem('n3', null);
      t.notMatch(
        await run('ip', ['netns', 'exec', ns, 'tc', 'qdisc', 'show', 'dev', 'eth0']),
        /tbf|netem/,
      );
      t.match((await get(`${e3.httpUrl}/`)).json, { id: 'n3' });
    });

    await t.test('pause stops answers, resume brings them back (same pid)', async (t) => {
      const before = (await get(`${e2.httpUrl}/`)).json as { pid: number };
      t.equal(before.pid, cluster.pid('n2'), 'ip netns exec runs the node in place');
      await cluster.pauseNode('n2');
      t.equal(cluster.nodeState('n2'), 'paused');
      await t.rejects(get(`${e2.httpUrl}/`, null, 300), {
        name: 'HttpTransportError',
        message: /no answer/,
      });
      await cluster.resumeNode('n2');
      t.match((await get(`${e2.httpUrl}/`)).json, { pid: before.pid });
    });

    await t.test('kill then restart gives a new process on the same address', async (t) => {
      const before = cluster.pid('n1');
      await cluster.killNode('n1');
      t.equal(cluster.nodeState('n1'), 'stopped');
      await t.rejects(get(`${e1.httpUrl}/`, null, 500), HttpTransportError);
      await cluster.startNode('n1');
      for (let attempt = 0; ; attempt++) {
        try {
          const reply = (await get(`${e1.httpUrl}/`)).json as { pid: number };
          t.not(reply.pid, before);
          break;
        } catch (error) {
          if (attempt > 100) throw error;
          await new Promise((r) => setTimeout(r, 50));
        }
      }
    });

    await t.test(
      'wipe empties a stopped node, counts a generation; a start may join',
      async (t) => {
        const dataDir = join(runDir, 'data', 'n3');
        await t.rejects(cluster.wipeNode('n3'), /running/, 'never under a running node');
        await cluster.killNode('n3');
        mkdirSync(dataDir, { recursive: true });
        writeFileSync(join(dataDir, 'log'), 'x');
        t.equal(cluster.dataGeneration('n3'), 0);
        await cluster.wipeNode('n3');
        t.notOk(existsSync(join(dataDir, 'log')), 'data gone');
        t.equal(cluster.dataGeneration('n3'), 1);
        await cluster.startNode('n3', { join: e1.httpUrl });
        for (let attempt = 0; ; attempt++) {
          try {
            t.match((await get(`${e3.httpUrl}/`)).json, { id: 'n3', join: e1.httpUrl });
            break;
          } catch (error) {
            if (attempt > 100) throw error;
            await new Promise((r) => setTimeout(r, 50));
          }
        }
      },
    );

    await t.test('down removes namespaces and links', async (t) => {
      const prefix = cluster.topology.prefix;
      await cluster.down();
      t.notMatch(await run('ip', ['netns', 'list']), new RegExp(prefix));
      t.notMatch(await run('ip', ['-o', 'link', 'show']), new RegExp(prefix));
    });
  },
);

t.test(
  'libfaketime clock faults reach the node process',
  {
    skip: isRoot
      ? findLibfaketime() === null
        ? 'libfaketime missing (scripts/chaos-deps.sh)'
        : false
      : 'needs root',
  },
  async (t) => {
    const runDir = mkdtempSync(join(tmpdir(), 'tenure-netns-clock-'));
    const cluster = await NetnsCluster.create({
      runDir,
      command: fakeNode,
      nodeIds: ['n1', 'n2'],
      clientCount: 0,
      wallClockFaults: true,
    });
    t.teardown(async () => {
      await cluster.down();
      rmSync(runDir, { recursive: true, force: true });
    });
    await cluster.startNode('n1');
    await cluster.startNode('n2', { clockRate: 2 });
    const time = async (id: string): Promise<{ dateMs: number; perfMs: number }> => {
      for (let attempt = 0; ; attempt++) {
        try {
          return (
            await httpJson('GET', `${cluster.endpoint(id).httpUrl}/time`, undefined, {
              timeoutMs: 1000,
            })
          ).json as { dateMs: number; perfMs: number };
        } catch (error) {
          if (attempt > 100) throw error;
          await new Promise((r) => setTimeout(r, 50));
        }
      }
    };
    await t.test('a wall-clock step moves Date only, at run time', async (t) => {
      const before = await time('n1');
      await cluster.setWallClockOffset('n1', 3600);
      // libfaketime re-reads the timestamp file at most every second (FAKETIME_CACHE_DURATION=1).
      let after = await time('n1');
      for (let attempt = 0; after.dateMs - Date.now() < 3_000_000 && attempt < 60; attempt++) {
        await new Promise((r) => setTimeout(r, 100));
        after = await time('n1');
      }
      t.ok(after.dateMs - Date.now() > 3_500_000, 'node wall clock is about an hour ahead');
      t.ok(after.perfMs - before.perfMs < 600_000, 'monotonic clock did not jump');
      await cluster.setWallClockOffset('n1', 0);
    });
    await t.test('a clock rate scales the monotonic clock', async (t) => {
      const a = await time('n2');
      const startMs = performance.now();
      await new Promise((r) => setTimeout(r, 1000));
      const b = await time('n2');
      const realMs = performance.now() - startMs;
      t.ok(
        (b.perfMs - a.perfMs) / realMs > 1.5,
        `node monotonic ran at about x2 (${((b.perfMs - a.perfMs) / realMs).toFixed(2)})`,
      );
    });
  },
);

t.test(
  'cleanupLeftovers removes a dead run and spares a live one',
  { skip: isRoot ? false : 'needs root' },
  async (t) => {
    const stateDir = mkdtempSync(join(tmpdir(), 'tenure-netns-state-'));
    t.teardown(() => rmSync(stateDir, { recursive: true, force: true }));
    const made: string[] = [];
    t.teardown(async () => {
      for (const ns of made) await run('ip', ['netns', 'del', ns]).catch(() => undefined);
    });
    const addNs = async (ns: string): Promise<void> => {
      await run('ip', ['netns', 'add', ns]);
      made.push(ns);
    };
    const me = currentOwner();
    const writeState = (
      prefix: string,
      owner: { pid: number; startTicks: number | null; bootId: string | null },
    ): void =>
      writeFileSync(
        join(stateDir, `${prefix}.json`),
        JSON.stringify({ prefix, ...owner, subnetIndex: null, createdAtIso: '' }),
      );
    // A dead run: its state file names a pid that cannot exist.
    const dead = 'tn0dead0';
    await addNs(`${dead}-n1`);
    await run('ip', ['link', 'add', `${dead}-br`, 'type', 'bridge']);
    writeState(dead, { pid: 2 ** 22 + 1, startTicks: 1, bootId: me.bootId });
    // A dead run whose pid was reused (by this very process): other start time = dead.
    const reused = 'tn0ce5ed';
    await addNs(`${reused}-n1`);
    writeState(reused, {
      pid: process.pid,
      startTicks: (me.startTicks ?? 0) + 1,
      bootId: me.bootId,
    });
    // A live run (this process's parent is alive, same start time).
    const parent = readProcStat(process.ppid);
    const live = 'tn0a11ee';
    await addNs(`${live}-n1`);
    writeState(live, {
      pid: process.ppid,
      startTicks: parent !== null && parent !== 'unreadable' ? parent.startTicks : null,
      bootId: me.bootId,
    });
    // A sibling run keeping its state elsewhere: no state file here, so not ours to judge.
    const sibling = 'tn0b0b0b';
    await addNs(`${sibling}-n1`);
    const report = cleanupLeftovers({ stateDir });
    t.ok(report.prefixes.includes(dead), 'dead owner: removed');
    t.ok(report.prefixes.includes(reused), 'reused pid: removed');
    t.notOk(report.prefixes.includes(live), 'live owner: kept');
    t.notOk(report.prefixes.includes(sibling), 'no state file here: kept');
    t.same(report.kept.find((k) => k.prefix === sibling)?.reason, 'keep-unowned');
    const namespaces = await run('ip', ['netns', 'list']);
    t.notMatch(namespaces, new RegExp(dead));
    t.notMatch(namespaces, new RegExp(reused));
    t.match(namespaces, new RegExp(live));
    t.match(namespaces, new RegExp(sibling));
    t.notMatch(await run('ip', ['-o', 'link', 'show']), new RegExp(dead));
    t.notOk(existsSync(join(stateDir, `${dead}.json`)), 'dead run state file removed');
    t.ok(existsSync(join(stateDir, `${live}.json`)), 'live run state file kept');
  },
);

// The BC-11 failure of 2026-11-29 10:21: a cleanup in another test process (with a private state
// dir) SIGKILLed a live run's nodes and deleted its namespaces. A sibling process's cleanup, with
// the shared or any other state dir, must leave a live run alone; once the owner is dead, it goes.
t.test(
  'a sibling process cleanup never touches a live run, and removes it once its owner is dead',
  { skip: isRoot ? false : 'needs root' },
  async (t) => {
    const topologyModule = new URL('./netns.ts', import.meta.url).href;
    const inChild = (script: string): { stdout: string; status: number | null; stderr: string } => {
      const result = spawnSync(
        process.execPath,
        ['--import', 'tsx', '--input-type=module', '-e', script],
        { cwd: testWorkspace, encoding: 'utf8', timeout: 60_000 },
      );
      return { stdout: result.stdout, status: result.status, stderr: result.stderr };
    };
    const privateDir = mkdtempSync(join(tmpdir(), 'tenure-netns-sibling-'));
    t.teardown(() => rmSync(privateDir, { recursive: true, force: true }));
    const runDir = mkdtempSync(join(tmpdir(), 'tenure-netns-live-'));
    const cluster = await NetnsCluster.create({
      runDir,
      command: fakeNode,
      nodeIds: ['n1'],
      clientCount: 0,
    });
    t.teardown(async () => {
      await cluster.down();
      rmSync(runDir, { recursive: true, force: true });
    });
    await cluster.up();
    const pid = cluster.pid('n1');
    const prefix = cluster.topology.prefix;
    const sibling = inChild(`const m = await import(${JSON.stringify(topologyModule)});
    const a = m.cleanupLeftovers(); const b = m.cleanupLeftovers({ stateDir: ${JSON.stringify(privateDir)} });
    console.log(JSON.stringify([...a.prefixes, ...b.prefixes]));`);
    t.equal(sibling.status, 0, sibling.stderr);
    t.notOk(
      (JSON.parse(sibling.stdout.trim() || '[]') as string[]).includes(prefix),
      'sibling cleanup removed nothing of ours',
    );
    t.equal(cluster.nodeState('n1'), 'running');
    t.equal(cluster.pid('n1'), pid, 'node process untouched');
    t.match(await run('ip', ['netns', 'list']), new RegExp(`${prefix}-n1`));

    // A run whose owner process dies without teardown (SIGKILL) is a leftover for the next cleanup.
    const orphan = inChild(`const m = await import(${JSON.stringify(topologyModule)});
    const topo = await m.NetnsTopology.create({ nodeIds: ['n1'], clientCount: 0 });
    console.log(topo.prefix); process.kill(process.pid, 'SIGKILL');`);
    const orphanPrefix = orphan.stdout.trim();
    t.match(orphanPrefix, /^tn[0-9a-f]{6}$/, orphan.stderr);
    t.match(
      await run('ip', ['netns', 'list']),
      new RegExp(`${orphanPrefix}-n1`),
      'killed run left its namespace',
    );
    const report = cleanupLeftovers();
    t.ok(report.prefixes.includes(orphanPrefix), 'dead owner: removed');
    t.notOk(report.prefixes.includes(prefix), 'own live run: kept');
    t.notMatch(await run('ip', ['netns', 'list']), new RegExp(orphanPrefix));
    t.equal(cluster.nodeState('n1'), 'running');
  },
);
