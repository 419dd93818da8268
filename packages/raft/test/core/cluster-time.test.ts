// Proves SPEC §2 cluster time in the core: the leader stamps entries with termStart + elapsed, heartbeats
// carry it, followers keep the highest seen (frozen while leaderless), a new leader starts from it,
// and it never decreases along the log or across calls, whatever the nodes' clocks read.
import t from 'tap';
import { ScriptedNetwork } from '../../src/testing/scripted-network.js';

const three = ['n1', 'n2', 'n3'];

t.test('SPEC §2 leader stamps entries with termStartClusterTime + elapsed monotonic time', async (t) => {
  const net = new ScriptedNetwork(three);
  net.elect('n1');
  const leader = net.core('n1');
  const noop = net.disks.get('n1')!.entries[0]!;
  t.equal(noop.type, 'noop');
  t.equal(noop.clusterTimeMs, 0, 'first term starts at the highest time seen (0)');
  net.clocks.get('n1')!.advance(1500);
  const r = leader.propose(new Uint8Array([1]));
  t.match(r, { ok: true, clusterTimeMs: 1500 });
  net.clocks.get('n1')!.advance(250);
  t.equal(leader.clusterTimeMs(), 1750);
  net.process('n1');
  const stamps = net.disks.get('n1')!.entries.map((e) => e.clusterTimeMs);
  t.same(stamps, [0, 1500]);
});

t.test('SPEC §2 heartbeats carry cluster time; followers report the highest seen', async (t) => {
  const net = new ScriptedNetwork(three);
  net.elect('n1');
  net.clocks.get('n1')!.advance(10_000);
  net.tick('n1'); // +100 ms, heartbeat
  net.stabilize();
  t.equal(net.core('n2').clusterTimeMs(), 10_100);
  t.equal(net.core('n3').clusterTimeMs(), 10_100);
  t.equal(net.core('n1').clusterTimeMs(), 10_100);
});

t.test('SPEC §1.5 cluster time is frozen while there is no leader', async (t) => {
  const net = new ScriptedNetwork(three);
  net.elect('n1');
  net.tick('n1', 3);
  net.stabilize();
  const seen = net.core('n2').clusterTimeMs();
  net.crash('n1');
  net.clocks.get('n2')!.advance(60_000);
  net.tick('n2', 5);
  t.equal(net.core('n2').clusterTimeMs(), seen, 'follower time does not run on its own');
});

t.test('SPEC §2 a new leader starts from the highest time seen, even with a slower clock', async (t) => {
  const net = new ScriptedNetwork(three);
  net.elect('n1');
  net.clocks.get('n1')!.advance(3_600_000); // an idle hour, only heartbeats
  net.tick('n1');
  net.stabilize();
  const seen = net.core('n2').clusterTimeMs();
  t.ok(seen >= 3_600_000);
  t.ok(net.clocks.get('n2')!.nowMs() < 10_000, "n2's own clock is far behind");
  net.crash('n1');
  net.elect('n2');
  const entries = net.disks.get('n2')!.entries;
  const noop = entries[entries.length - 1]!;
  t.equal(noop.term, 2);
  t.equal(noop.clusterTimeMs, seen, 'new term starts at the highest cluster time seen');
  net.clocks.get('n2')!.advance(400);
  t.equal(net.core('n2').clusterTimeMs(), seen + 400 + 100 * 0, 'then runs on the new leader clock');
});

t.test(
  'SPEC §2 cluster time never decreases along the log or across calls through leader changes',
  async (t) => {
    const net = new ScriptedNetwork(three, { draws: 'seeded', seed: 7 });
    let last = 0;
    const observe = () => {
      for (const id of net.ids) {
        if (!net.cores.has(id)) continue;
        const now = net.core(id).clusterTimeMs();
        t.ok(now >= 0);
        const stamps = net.disks.get(id)!.entries.map((e) => e.clusterTimeMs);
        for (let i = 1; i < stamps.length; i++)
          if (stamps[i]! < stamps[i - 1]!) t.fail(`${id} log time decreased`);
      }
      const leader = net.leader();
      if (leader !== null) {
        const now = net.core(leader).clusterTimeMs();
        if (now < last) t.fail('leader time went back');
        last = Math.max(last, now);
      }
    };
    net.clocks.get('n3')!.advance(50_000); // clocks disagree wildly
    for (let round = 0; round < 6; round++) {
      for (let i = 0; i < 60 && net.leader() === null; i++) {
        net.tickAll();
        net.stabilize();
      }
      const leader = net.leader()!;
      net.propose(leader, `r${round}`);
      net.tickAll();
      net.stabilize();
      observe();
      net.crash(leader);
      net.restart(leader);
      observe();
    }
    t.pass('no decrease observed');
  },
);
