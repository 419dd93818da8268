// Proves the monitoring files in deploy/monitoring are usable: the alert rules parse as Prometheus
// rule groups with the fields Alertmanager needs, the Grafana dashboard is a dashboard with queries,
// and every metric either of them uses is exported by a running node's /metrics (a real one-node
// cluster that has made, released and expired grants and written its log).
import t from 'tap';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { freePorts } from '@tenure/testkit';
import { createLogger, loadConfig, startNode } from '@tenure/server';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const dir = join(repoRoot, 'deploy', 'monitoring');

interface Rule {
  alert?: string;
  expr?: string;
  for?: string;
  labels?: { severity?: string };
  annotations?: { summary?: string; description?: string };
}
const rules = parse(readFileSync(join(dir, 'prometheus-alerts.yaml'), 'utf8')) as {
  groups: { name: string; rules: Rule[] }[];
};
interface Panel {
  title: string;
  targets: { expr: string }[];
}
const dashboard = JSON.parse(readFileSync(join(dir, 'grafana-dashboard.json'), 'utf8')) as {
  title: string;
  uid: string;
  panels: Panel[];
};

/** The metric names an expression uses (histogram series map back to their histogram). */
function metricNames(expr: string): string[] {
  return [...expr.matchAll(/\btenure_[a-z0-9_]+/g)].map((m) =>
    m[0].replace(/_(bucket|sum|count)$/, ''),
  );
}

t.test('the alert rules are Prometheus rule groups with the alerts operators need', async (t) => {
  t.ok(Array.isArray(rules.groups) && rules.groups.length > 0, 'groups');
  const all = rules.groups.flatMap((g) => g.rules);
  for (const r of all) {
    t.type(r.alert, 'string', 'each rule is an alert');
    t.type(r.expr, 'string', `${r.alert}: expr`);
    t.match(r.labels?.severity, /^(critical|warning)$/, `${r.alert}: severity`);
    t.type(r.annotations?.summary, 'string', `${r.alert}: summary`);
    if (r.for !== undefined) t.match(r.for, /^\d+[smh]$/, `${r.alert}: for is a duration`);
  }
  const names = all.map((r) => r.alert);
  for (const needed of [
    'TenureNoLeader',
    'TenureLeaderFlapping',
    'TenureFsyncSlow',
    'TenureLeaseExpiriesSpiking',
  ])
    t.ok(names.includes(needed), needed);
  t.equal(new Set(names).size, names.length, 'alert names are unique');
});

t.test('the dashboard has panels with Prometheus queries', async (t) => {
  t.equal(dashboard.uid, 'tenure-overview');
  t.ok(dashboard.panels.length >= 8);
  for (const p of dashboard.panels) t.ok(p.targets.length > 0, `${p.title} has queries`);
});

t.test('every metric the rules and the dashboard use is exported by a running node', async (t) => {
  const [httpPort, raftPort] = await freePorts(2);
  const dataDir = mkdtempSync(join(tmpdir(), 'tenure-monitoring-'));
  const config = loadConfig(
    [
      '--id',
      'n1',
      '--peers',
      `n1=127.0.0.1:${raftPort}@127.0.0.1:${httpPort}`,
      '--data-dir',
      dataDir,
      '--snapshot-entries',
      '20',
    ],
    {},
  );
  const node = await startNode(config, { logger: createLogger('n1', 'silent', () => null) });
  t.teardown(async () => {
    await node.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const base = `http://127.0.0.1:${httpPort}`;
  const post = (path: string, body: unknown) =>
    fetch(base + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> }));
  // A single node elects itself; wait on readiness (no fixed sleep).
  for (let i = 0; ; i++) {
    if ((await fetch(`${base}/readyz`)).status === 200) break;
    if (i > 600) throw new Error('node never became ready');
    await new Promise((r) => setTimeout(r, 100));
  }
  for (let i = 0; i < 12; i++) {
    const a = await post(`/v1/leases/m${i}/acquire`, { holder: 'A', ttlMs: 60_000 });
    t.equal(a.status, 200);
    await post(`/v1/leases/m${i}/release`, { holder: 'A', fencingToken: a.body.fencingToken });
  }
  const text = await (await fetch(`${base}/metrics`)).text();
  const exported = new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]));
  const used = new Set([
    ...rules.groups.flatMap((g) => g.rules.flatMap((r) => metricNames(r.expr ?? ''))),
    ...dashboard.panels.flatMap((p) => p.targets.flatMap((q) => metricNames(q.expr))),
  ]);
  t.ok(used.size >= 15, `${used.size} metrics used`);
  for (const name of used) t.ok(exported.has(name), `${name} is exported`);
  t.match(text, /tenure_raft_persist_seconds_count \d+/, 'the node timed its log writes');
  t.match(text, /tenure_raft_snapshots_total\{origin="taken"\} \d+/, 'and its snapshots');
  t.match(text, /tenure_leader_changes_total 1\n/, 'one leader, one change');
});
