// Proves each partition shape blocks exactly the directed links it names (and nothing else).
import t from 'tap';
import { bridge, clientCut, cutBetween, isolate, oneWay, split } from './partition-plan.js';

const nodes = ['n1', 'n2', 'n3'];
const key = (blocks: { from: string; to: string }[]) =>
  blocks.map((b) => `${b.from}>${b.to}`).sort();

t.test('isolate cuts a node from peers, and from clients unless peer-only', async (t) => {
  t.same(key(isolate('n1', nodes, ['c0'], true)), ['n1>n2', 'n1>n3', 'n2>n1', 'n3>n1']);
  t.same(key(isolate('n1', nodes, ['c0'], false)), [
    'c0>n1',
    'n1>c0',
    'n1>n2',
    'n1>n3',
    'n2>n1',
    'n3>n1',
  ]);
});

t.test('split, bridge, one-way and client cut', async (t) => {
  t.same(key(split([['n1'], ['n2', 'n3']])), ['n1>n2', 'n1>n3', 'n2>n1', 'n3>n1']);
  t.same(key(bridge('n2', 'n3')), ['n2>n3', 'n3>n2']);
  t.same(key(oneWay(nodes, 'n2')), ['n1>n2', 'n3>n2']);
  t.same(key(clientCut(['c1'], ['n1', 'n2'])), ['c1>n1', 'c1>n2', 'n1>c1', 'n2>c1']);
  t.same(cutBetween(['n1'], ['n1']), []);
});
