// Proves mutual TLS protects a running cluster's Raft links: rogue peers speaking the real protocol
// as "n3" with an AppendEntries of a term 1000 ahead — over plain TCP, over TLS without a
// certificate, and with a certificate from another CA — are refused at the handshake (each refusal
// logged by the node), no node ever adopts that term, and writes keep succeeding. A control peer
// with a certificate from the cluster's CA does get the term adopted, so the check can fail.
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { Packr } from 'msgpackr';
import t from 'tap';
import { pollUntil } from '@tenure/testkit';
import { asIndex, asTerm, TcpTransport, type Message, type PeerTlsOptions } from '@tenure/raft';
import { LocalCluster, type NodeInfo } from '../support/cluster.js';
import { fetchTrusting, TestCa, tlsArgs } from '../support/tls.js';

const dir = mkdtempSync(join(tmpdir(), 'tenure-rogue-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const ca = new TestCa(join(dir, 'ca'), 'cluster CA');
const otherCa = new TestCa(join(dir, 'other'), 'rogue CA');
const nodeFiles = new Map(['n1', 'n2', 'n3'].map((id) => [id, ca.issue(id)]));
const rogueFiles = otherCa.issue('n3');
const TERM_JUMP = 1000;

const appendAhead = (to: string, term: number): Message => ({
  type: 'AppendEntries',
  from: 'n3',
  to,
  term: asTerm(term),
  prevLogIndex: asIndex(0),
  prevLogTerm: asTerm(0),
  entries: [],
  leaderCommit: asIndex(0),
  clusterTimeMs: 0,
  heartbeatSeq: 1,
});

/** A peer "n3" dialling `target` with the real transport; sends the message until closed. */
async function roguePeer(target: NodeInfo, term: number, peerTls?: PeerTlsOptions) {
  const rogue = new TcpTransport({
    id: 'n3',
    clusterId: 'tenure-test',
    peers: [{ id: target.id, raftAddress: target.raftAddress }],
    listen: '127.0.0.1:0',
    reconnectDelayMsMax: 200,
    ...(peerTls === undefined ? {} : { tls: peerTls }),
  });
  await rogue.start();
  const timer = setInterval(() => rogue.send(appendAhead(target.id, term)), 50);
  return {
    close: async () => {
      clearInterval(timer);
      await rogue.close();
    },
  };
}

/** A TLS dialer without any certificate sending a Hello and the message once connected. */
function certificateless(target: NodeInfo, term: number): { close: () => void } {
  const packr = new Packr({ useRecords: false, mapsAsObjects: true, variableMapSize: true });
  const frame = (v: unknown): Buffer => {
    const payload = packr.pack(v);
    const header = Buffer.alloc(4);
    header.writeUInt32BE(payload.length);
    return Buffer.concat([header, payload]);
  };
  const socket = tls.connect({ host: '127.0.0.1', port: target.raftPort, ca: ca.ca.certPem });
  socket.on('error', () => {});
  socket.once('secureConnect', () => {
    socket.write(frame({ hello: 1, clusterId: 'tenure-test', from: 'n3', to: target.id }));
    socket.write(frame(appendAhead(target.id, term)));
  });
  return { close: () => socket.destroy() };
}

const refusals = (n: NodeInfo): number =>
  readFileSync(n.logFile, 'utf8').split('peer refused at TLS handshake').length - 1;

t.test('rogue peers are refused at the handshake; term and writes are undisturbed', async (t) => {
  const c = await LocalCluster.start({
    scheme: 'https',
    fetch: fetchTrusting([ca.ca.certPem]),
    nodeArgs: (n) => tlsArgs(nodeFiles.get(n.id)!, ca.caFile),
  });
  t.teardown(() => c.teardown());
  const leader = await c.waitForLeader();
  const termBefore = (await c.clusterView(leader, 10_000))!.term;
  const rogueTerm = termBefore + TERM_JUMP;
  const [n1, n2, n3] = c.nodes as [NodeInfo, NodeInfo, NodeInfo];

  // One kind of rogue per node, so each node's first (rate-limited) refusal line is its own.
  const plain = await roguePeer(n1, rogueTerm);
  const wrongCa = await roguePeer(n2, rogueTerm, {
    cert: readFileSync(rogueFiles.certFile),
    key: readFileSync(rogueFiles.keyFile),
    ca: ca.ca.certPem,
  });
  const noCert = certificateless(n3, rogueTerm);
  t.teardown(async () => {
    await plain.close();
    await wrongCa.close();
    noCert.close();
  });
  let writes = 0;
  for (const n of [n1, n2, n3]) {
    await pollUntil(`${n.id} to log a refused peer`, () => refusals(n) >= 1);
    const put = await c.request(leader, 'PUT', `/v1/kv/rogue-${n.id}`, { value: writes });
    t.equal(put.status, 200, `write while ${n.id} refuses a rogue`);
    writes++;
  }
  for (const n of c.nodes) {
    const view = await c.clusterView(n.id, 10_000);
    t.ok(view !== null && view.term < rogueTerm, `${n.id} never took the rogue's term`);
  }
  await plain.close();
  await wrongCa.close();
  noCert.close();

  // Control: the same message from a peer with a certificate of the cluster's CA is accepted.
  const trusted = await roguePeer(n1, rogueTerm, {
    cert: readFileSync(nodeFiles.get('n3')!.certFile),
    key: readFileSync(nodeFiles.get('n3')!.keyFile),
    ca: ca.ca.certPem,
  });
  t.teardown(() => trusted.close());
  await pollUntil(
    'n1 to adopt the trusted peer term',
    async () => ((await c.clusterView('n1', 10_000))?.term ?? 0) >= rogueTerm,
  );
  t.pass('a peer with a certificate from the cluster CA is heard (the refusals above were TLS)');
});
