// Proves the Kubernetes manifests are valid objects of their API versions (checked against the
// Kubernetes OpenAPI schemas bundled by kubernetes-models) and that they describe a working Tenure
// cluster: every replica is a listed peer, peers find each other before they are ready, probes use
// /readyz and /healthz, and voluntary disruptions take at most one node.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { Service } from 'kubernetes-models/v1';
import { StatefulSet } from 'kubernetes-models/apps/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const manifest = join(repoRoot, 'deploy', 'kubernetes', 'tenure.yaml');

type Doc = { kind: string; metadata: { name: string } } & Record<string, unknown>;
const docs = parseAllDocuments(readFileSync(manifest, 'utf8')).map((d) => d.toJSON() as Doc);
const byKind = (kind: string): Doc[] => docs.filter((d) => d.kind === kind);

t.test('every object validates against its Kubernetes schema', async (t) => {
  const models: Record<string, new (d: never) => { validate(): void }> = {
    Service,
    StatefulSet,
    PodDisruptionBudget,
  };
  t.same(docs.map((d) => d.kind).sort(), [
    'PodDisruptionBudget',
    'Service',
    'Service',
    'StatefulSet',
  ]);
  for (const doc of docs) {
    const Model = models[doc.kind]!;
    t.doesNotThrow(() => new Model(doc as never).validate(), `${doc.kind} ${doc.metadata.name}`);
  }
});

t.test('the StatefulSet describes a cluster whose peers are exactly its replicas', async (t) => {
  const sts = new StatefulSet(byKind('StatefulSet')[0] as never);
  const spec = sts.spec!;
  const container = spec.template.spec!.containers[0]!;
  const env = new Map((container.env ?? []).map((e) => [e.name, e]));
  t.equal(spec.podManagementPolicy, 'Parallel', 'all pods start together (quorum needs them)');
  t.equal(env.get('TENURE_ID')?.valueFrom?.fieldRef?.fieldPath, 'metadata.name', 'id = pod name');
  const peers = (env.get('TENURE_PEERS')?.value ?? '').split(',');
  const name = sts.metadata!.name!;
  const service = spec.serviceName;
  t.equal(peers.length, spec.replicas, 'one peer per replica');
  peers.forEach((peer, i) => {
    const host = `${name}-${i}.${service}`;
    t.equal(peer, `${name}-${i}=${host}:7100@${host}:7001`, `peer ${i}`);
  });
  t.equal(container.readinessProbe?.httpGet?.path, '/readyz');
  t.equal(container.livenessProbe?.httpGet?.path, '/healthz');
  t.ok(spec.volumeClaimTemplates?.length, 'each node has its own persistent volume');
});

t.test(
  'the headless Service publishes not-ready peers; the PDB allows one disruption',
  async (t) => {
    const headless = byKind('Service').find((s) => s.metadata.name === 'tenure-peers');
    const svc = new Service(headless as never);
    t.equal(svc.spec?.clusterIP, 'None');
    t.equal(svc.spec?.publishNotReadyAddresses, true);
    const pdb = new PodDisruptionBudget(byKind('PodDisruptionBudget')[0] as never);
    t.equal(pdb.spec?.maxUnavailable, 1);
  },
);
