// Proves the simulated network honours one-way and symmetric partitions, cuts in-flight messages, and heals.
import t from 'tap';
import type { Message } from '../../src/core/types.js';
import { asTerm } from '../../src/core/types.js';
import { CALM_NETWORK, EventQueue, SimNetwork, SimRandom } from '../../src/testing/index.js';

const msg = (from: string, to: string): Message => ({
  type: 'TimeoutNow',
  from,
  to,
  term: asTerm(1),
});

function setup(): { q: EventQueue; net: SimNetwork; got: string[] } {
  const q = new EventQueue();
  const got: string[] = [];
  const net = new SimNetwork(q, new SimRandom(1), CALM_NETWORK, (m) =>
    got.push(`${m.from}>${m.to}`),
  );
  return { q, net, got };
}

function drain(q: EventQueue): void {
  while (q.runNext(Number.MAX_SAFE_INTEGER)) {
    /* run */
  }
}

t.test('one-way partition blocks one direction only', async (t) => {
  const { q, net, got } = setup();
  net.partitionOneWay(['n1'], ['n2']);
  net.send(msg('n1', 'n2'));
  net.send(msg('n2', 'n1'));
  drain(q);
  t.same(got, ['n2>n1']);
});

t.test(
  'a partition started while a message is in flight drops it; heal restores delivery',
  async (t) => {
    const { q, net, got } = setup();
    net.send(msg('n1', 'n2'));
    net.partition(['n1'], ['n2', 'n3']);
    drain(q);
    t.same(got, []);
    net.healAll();
    net.send(msg('n1', 'n3'));
    drain(q);
    t.same(got, ['n1>n3']);
    t.equal(net.stats.dropped, 1);
  },
);
