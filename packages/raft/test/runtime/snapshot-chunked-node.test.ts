// Proves RaftNodes over real TCP transports install a snapshot larger than the frame bound (Raft §7;
// docs/architecture.md "How snapshots travel"): with frameBytesMax 128 KiB and 8 KiB chunks, a
// member that starts late, after the others compacted their logs, receives a ~300 KiB snapshot as
// chunk frames and ends with the leader's state; replication continues after the install.
import t from 'tap';
import { freePorts } from '@tenure/testkit';
import { RaftNode } from '../../src/raft-node.js';
import { MemoryRaftStorage } from '../../src/storage/raft-storage.js';
import { TcpTransport } from '../../src/transport/tcp-transport.js';
import { ListMachine, until } from './fixtures/list-machine.js';

const FRAME_BYTES_MAX = 128 * 1024;
const CHUNK_BYTES = 8 * 1024;
const DEADLINE_MS = 120_000;
const encode = (s: string) => new TextEncoder().encode(s);

t.test('a late member catches up from a snapshot larger than frameBytesMax', async (t) => {
  const ids = ['n1', 'n2', 'n3'];
  const ports = await freePorts(3);
  const peers = ids.map((id, i) => ({ id, raftAddress: `127.0.0.1:${ports[i]!}` }));
  const nodes = new Map<string, { node: RaftNode<number>; sm: ListMachine; tcp: TcpTransport }>();
  const start = async (id: string, i: number) => {
    const sm = new ListMachine();
    const tcp = new TcpTransport({
      id,
      clusterId: 'test',
      peers,
      listen: peers[i]!.raftAddress,
      frameBytesMax: FRAME_BYTES_MAX,
      snapshotChunkBytes: CHUNK_BYTES,
      snapshotDir: t.testdir({}) + `/${id}`,
    });
    const node = await RaftNode.open({
      id,
      clusterId: 'test',
      peers,
      stateMachine: sm,
      storage: new MemoryRaftStorage(),
      transport: tcp,
      tickMs: 10,
      heartbeatMs: 50,
      electionTimeoutMs: 500,
      randomSeed: i + 1,
      snapshotEntries: 50,
      snapshotKeepEntries: 0,
    });
    nodes.set(id, { node, sm, tcp });
  };
  t.teardown(async () => {
    for (const m of nodes.values()) await m.node.stop();
  });
  await start('n1', 0);
  await start('n2', 1);
  const leader = await until(
    () => [...nodes.values()].find((m) => m.node.status().role === 'leader'),
    'a leader of n1, n2',
    DEADLINE_MS,
  );
  const filler = 'y'.repeat(2500);
  for (let i = 0; i < 120; i++) await leader.node.propose(encode(`${i}:${filler}`));
  const snapshotBytes = leader.sm.snapshot().length;
  t.ok(snapshotBytes > 2 * FRAME_BYTES_MAX, `the state (${snapshotBytes} bytes) exceeds a frame`);

  await start('n3', 2);
  const late = nodes.get('n3')!;
  await until(() => late.sm.values.length === 120, 'n3 caught up', DEADLINE_MS);
  t.ok(late.sm.restores >= 1, 'by installing a snapshot');
  t.same(late.sm.values, leader.sm.values, 'the leader’s state');
  const received = late.tcp.stats().snapshotsReceived;
  t.ok(received.snapshotsDelivered >= 1, 'delivered by the chunk receiver');
  t.ok(received.chunksAccepted > FRAME_BYTES_MAX / CHUNK_BYTES, 'in many chunks');
  await leader.node.propose(encode('after'));
  await until(() => late.sm.values.at(-1) === 'after', 'replication continues', DEADLINE_MS);
  for (const m of nodes.values()) m.node.checkInvariants();
});
