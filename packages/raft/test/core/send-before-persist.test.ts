// Proves Ready.mustPersistBeforeSend (types.ts, dissertation §10.2.1): only a leader whose term and
// vote are already durable may send before persisting; it counts its own entries toward a commit only
// after advance() confirms them durable, followers alone can still commit them, and a leader that
// crashes between sending and its fsync loses nothing the cluster committed.
import t from 'tap';
import { RaftCore } from '../../src/core/raft-core.js';
import { asIndex, asTerm } from '../../src/core/types.js';
import type { Message, Ready } from '../../src/core/types.js';
import {
  ManualClock,
  ScriptedNetwork,
  scriptedDefaults,
} from '../../src/testing/scripted-network.js';
import { SeededRandom } from '../../src/random.js';

const three = ['n1', 'n2', 'n3'];
const encode = (s: string): Uint8Array => new TextEncoder().encode(s);

/** A 3-node network with n1 elected and everything settled. */
function withLeader(): { net: ScriptedNetwork; leader: RaftCore } {
  const net = new ScriptedNetwork(three);
  net.elect('n1');
  net.stabilize();
  return { net, leader: net.core('n1') };
}

/** Put `rd`'s messages on the wire and let follower `to` receive, persist and answer them. */
function sendTo(net: ScriptedNetwork, rd: Ready, to: string): void {
  net.queue.push(...rd.messages.filter((m) => m.to === to));
  net.deliver((m) => m.to === to);
}

/** Step the queued answers to n1 into its core directly (its Ready is outstanding: no processing). */
function answersToLeader(net: ScriptedNetwork, leader: RaftCore, from: string): number {
  const answers: Message[] = net.queue.filter((m) => m.to === 'n1' && m.from === from);
  net.drop((m) => m.to === 'n1' && m.from === from);
  for (const m of answers) leader.step(m);
  return answers.length;
}

t.test('a leader with durable term and vote may send first; nobody else may', async (t) => {
  const { net, leader } = withLeader();
  leader.propose(encode('x'));
  const rd = leader.ready();
  t.equal(rd.mustPersistBeforeSend, false, 'leader Ready with new entries sends first');
  t.equal(rd.hardState, null);
  t.equal(rd.entries.length, 1);
  t.ok(
    rd.messages.length === 2 &&
      rd.messages.every((m) => m.type === 'AppendEntries' && m.entries.length === 1),
    'the AppendEntries carry the not-yet-durable entry',
  );
  leader.advance(rd);

  // A follower's acknowledgement must wait for its own fsync.
  net.queue.push(...rd.messages);
  const f = net.core('n2');
  f.step(net.queue.find((m) => m.to === 'n2')!);
  const frd = f.ready();
  t.equal(frd.mustPersistBeforeSend, true, 'follower Ready persists before sending');
  t.ok(frd.messages.some((m) => m.type === 'AppendEntriesResponse' && m.success));
  f.advance(frd);

  // A single-node cluster becomes leader in the same Ready that changes its term: persist first.
  const solo = new RaftCore(
    { ...scriptedDefaults, id: 'n1', voters: ['n1'] },
    {
      hardState: { term: asTerm(0), votedFor: null, commitIndex: asIndex(0) },
      snapshot: null,
      entries: [],
    },
    new ManualClock(),
    new SeededRandom(7),
  );
  for (let i = 0; i < 100 && solo.softState().role !== 'leader'; i++) solo.tick();
  const srd = solo.ready();
  t.equal(srd.softState?.role, 'leader');
  t.equal(srd.hardState?.term, 1);
  t.equal(srd.mustPersistBeforeSend, true, 'a term/vote change always persists first');
  solo.advance(srd);
});

t.test('candidates and voters persist before sending', async (t) => {
  const net = new ScriptedNetwork(three, { config: { preVote: false } });
  const c = net.core('n1');
  for (let i = 0; i < 100 && c.softState().role === 'follower'; i++) c.tick();
  const crd = c.ready();
  t.equal(crd.softState?.role, 'candidate');
  t.equal(crd.mustPersistBeforeSend, true, 'RequestVote waits for the durable term and vote');
  const voter = net.core('n2');
  for (const m of crd.messages.filter((m) => m.to === 'n2')) voter.step(m);
  const vrd = voter.ready();
  t.ok(vrd.messages.some((m) => m.type === 'RequestVoteResponse' && m.granted));
  t.equal(vrd.mustPersistBeforeSend, true, 'a granted vote waits for the durable vote');
  voter.advance(vrd);
  c.advance(crd);
});

t.test(
  'the leader counts its own entry only after advance(); one follower is not enough before',
  async (t) => {
    const { net, leader } = withLeader();
    const commitBefore = leader.hardState().commitIndex;
    const p = leader.propose(encode('x'));
    t.ok(p.ok);
    const rd = leader.ready();
    sendTo(net, rd, 'n2');
    t.equal(answersToLeader(net, leader, 'n2'), 1);
    t.equal(
      leader.hardState().commitIndex,
      commitBefore,
      'n2 + an undurable leader log is no majority',
    );
    leader.advance(rd);
    t.equal(
      leader.hardState().commitIndex,
      p.ok ? p.index : -1,
      'commits once its own write is confirmed',
    );
    const next = leader.ready();
    t.same(
      next.committedEntries.map((e) => e.index),
      [p.ok ? p.index : -1],
      'applied only after the Ready holding it was advanced',
    );
    t.equal(
      next.mustPersistBeforeSend,
      false,
      'a commitIndex-only hard state change still sends first',
    );
    leader.advance(next);
  },
);

t.test(
  'a majority of followers commits without the leader’s fsync; apply still waits for it',
  async (t) => {
    const { net, leader } = withLeader();
    const p = leader.propose(encode('x'));
    if (!p.ok) throw new Error('propose failed');
    const rd = leader.ready();
    sendTo(net, rd, 'n2');
    sendTo(net, rd, 'n3');
    answersToLeader(net, leader, 'n2');
    answersToLeader(net, leader, 'n3');
    t.equal(leader.hardState().commitIndex, p.index, 'n2 and n3 hold it durably: committed');
    t.equal(leader.appliedIndex() < p.index, true, 'not applied yet');
    t.throws(
      () => leader.ready(),
      'no next Ready (and no apply) before advance of the one persisting it',
    );
    leader.advance(rd);
    const next = leader.ready();
    t.same(
      next.committedEntries.map((e) => e.index),
      [p.index],
    );
    leader.advance(next);
  },
);

t.test(
  'a leader that crashes after sending but before its fsync loses nothing committed',
  async (t) => {
    const { net, leader } = withLeader();
    const p = leader.propose(encode('lost-locally'));
    if (!p.ok) throw new Error('propose failed');
    const rd = leader.ready();
    sendTo(net, rd, 'n2');
    sendTo(net, rd, 'n3');
    net.crash('n1'); // its disk never got the entry
    t.equal(net.diskTerm('n1', p.index), undefined, 'the leader forgot the entry');
    t.equal(net.diskTerm('n2', p.index), p.term);
    net.drop((m) => m.to === 'n1');
    net.elect('n2');
    net.restart('n1');
    t.equal(
      net.core('n1').hardState().votedFor,
      'n1',
      'its durable vote keeps it from leading that term again',
    );
    net.stabilize();
    net.propose('n2', 'after');
    net.stabilize();
    net.tick('n2', scriptedDefaults.heartbeatTicks); // a heartbeat finds the restarted n1
    net.stabilize();
    for (const id of three) {
      t.same(
        net.appliedTexts(id).slice(-2),
        ['lost-locally', 'after'],
        `${id} applied the entry the old leader lost`,
      );
    }
  },
);
