// Proves the launcher's plan: Raft ports follow HTTP ports unless set, overlapping ranges are found before anything starts, env errors name the env var, the restart command carries the layout, and only a node with our id and cluster id counts as ours.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { LAUNCHER_SETTINGS } from '../src/cluster/launcher-settings.js';
import { launchPlan, restartCommand } from '../src/cluster/launch-plan.js';
import { layoutProblems } from '../src/cluster/port-check.js';
import { isOwnNode } from '../src/cluster/wait-up.js';
import { ConfigError } from '../src/config.js';

t.test('Raft ports follow HTTP ports unless --raft-port is given', async (t) => {
  const p = launchPlan(['--http-port', '8001'], {});
  t.equal(p.raftPort, 8101);
  t.same(
    p.nodes.map((n) => [n.httpAddress, n.raftAddress]),
    [
      ['127.0.0.1:8001', '127.0.0.1:8101'],
      ['127.0.0.1:8002', '127.0.0.1:8102'],
      ['127.0.0.1:8003', '127.0.0.1:8103'],
    ],
  );
  t.equal(launchPlan(['--http-port', '8001', '--raft-port', '9001'], {}).raftPort, 9001);
  t.equal(launchPlan([], { TENURE_LAUNCH_HTTP_PORT: '9000' }).raftPort, 9100);
  t.equal(launchPlan([], {}).httpPort, 7001);
});

t.test('overlapping and out-of-range port ranges are problems', async (t) => {
  t.same(layoutProblems({ httpPort: 7001, raftPort: 7101, nodes: 3 }), []);
  t.same(layoutProblems({ httpPort: 7001, raftPort: 7003, nodes: 3 }), [
    'HTTP ports 7001-7003 and Raft ports 7003-7005 overlap',
  ]);
  t.same(layoutProblems({ httpPort: 7004, raftPort: 7001, nodes: 3 }), []);
  t.match(layoutProblems({ httpPort: 65534, raftPort: 7001, nodes: 3 }), [/beyond 65535/]);
});

t.test('bad settings name the flag or env var; --only must be in the layout', async (t) => {
  t.throws(() => launchPlan([], { TENURE_LAUNCH_HTTP_PORT: 'x' }), {
    source: 'TENURE_LAUNCH_HTTP_PORT',
  });
  t.throws(() => launchPlan(['--nodes', '10'], {}), { source: '--nodes' });
  t.throws(() => launchPlan(['--only', 'n4'], {}), { setting: 'only' });
  t.throws(() => launchPlan(['--bogus'], {}), ConfigError);
  t.same(
    launchPlan(['--only', 'n2'], {}).selected.map((n) => n.id),
    ['n2'],
  );
});

t.test('the restart command names the layout and the node flags', async (t) => {
  const p = launchPlan(
    ['--http-port', '8001', '--data-dir', '/d', '--', '--log-level', 'warn'],
    {},
  );
  t.equal(
    restartCommand('n2', p),
    'npm run node -- n2 --http-port 8001 --raft-port 8101 --data-dir /d -- --log-level warn',
  );
  const q = launchPlan(['--nodes', '5', '--data-dir', '/my data'], {});
  t.equal(
    restartCommand('<id>', q),
    "npm run node -- <id> --nodes 5 --http-port 7001 --raft-port 7101 --data-dir '/my data'",
  );
  // A restart continues from the node's data: the restore-only flag is not repeated.
  const r = launchPlan(
    [
      '--data-dir',
      '/r',
      '--restore',
      '/b.snap',
      '--',
      '--token-floor',
      '9000',
      '--log-level',
      'warn',
    ],
    {},
  );
  t.equal(
    restartCommand('n2', r),
    'npm run node -- n2 --http-port 7001 --raft-port 7101 --data-dir /r -- --log-level warn',
  );
});

t.test('a node is ours only with our node id and cluster id', async (t) => {
  const me = { id: 'n1', clusterId: 'local-abc', httpAddress: 'x:1' };
  t.ok(isOwnNode({ status: 'ok', id: 'n1', clusterId: 'local-abc' }, me));
  t.notOk(isOwnNode({ status: 'ok', id: 'n1', clusterId: 'tenure-local' }, me), 'other cluster');
  t.notOk(isOwnNode({ status: 'ok', id: 'n2', clusterId: 'local-abc' }, me), 'other node');
  t.notOk(isOwnNode({ status: 'ok', id: 'n1' }, me), 'no cluster id');
  t.notOk(isOwnNode('ok', me));
});

t.test('the launcher has --help and --version', async (t) => {
  const launcher = fileURLToPath(new URL('../dist/cluster/launcher.js', import.meta.url));
  const help = spawnSync(process.execPath, [launcher, '--help'], { encoding: 'utf8' });
  t.equal(help.status, 0);
  t.match(help.stdout, /--raft-port <port>\s+Raft port of n1/);
  t.match(help.stdout, 'TENURE_LAUNCH_RAFT_PORT');
  t.match(help.stdout, /--secure \[on\|off\]\s+TLS on the API/, 'the switch is listed too');
  for (const s of Object.values(LAUNCHER_SETTINGS)) {
    t.match(help.stdout, `--${s.flag} `, `--help lists --${s.flag}`);
    t.match(help.stdout, s.env, `--help names ${s.env}`);
  }
  const version = spawnSync(process.execPath, [launcher, '--version'], { encoding: 'utf8' });
  t.match(version.stdout, /^\d+\.\d+\.\d+/);
});
