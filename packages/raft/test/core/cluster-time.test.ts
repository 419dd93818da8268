// Proves docs/concepts.md cluster time in the core: the leader stamps entries with termStart + elapsed, heartbeats
// carry it, followers keep the newest leader's reading (frozen while leaderless), a new leader starts
// from the timeline of its last entry, and cluster time never runs ahead of real time along the log —
// also after a stale leader's pause, with several leaders' timelines in flight, and for a remaining
// time read right after a leaderless gap while the old leader comes back with an unreplicated tail.
import assert from 'node:assert/strict';
import t from 'tap';
import { ScriptedNetwork } from '../../src/testing/scripted-network.js';
import type { Message } from '../../src/core/types.js';

const three = ['n1', 'n2', 'n3'];

t.test(
  'docs/concepts.md leader stamps entries with termStartClusterTime + elapsed monotonic time',
  async (t) => {
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
  },
);

t.test(
  'docs/concepts.md heartbeats carry cluster time; followers report the highest seen',
  async (t) => {
    const net = new ScriptedNetwork(three);
    net.elect('n1');
    net.clocks.get('n1')!.advance(10_000);
    net.tick('n1'); // +100 ms, heartbeat
    net.stabilize();
    t.equal(net.core('n2').clusterTimeMs(), 10_100);
    t.equal(net.core('n3').clusterTimeMs(), 10_100);
    t.equal(net.core('n1').clusterTimeMs(), 10_100);
  },
);

t.test('docs/concepts.md cluster time is frozen while there is no leader', async (t) => {
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

t.test(
  'docs/concepts.md a new leader starts from the highest time seen, even with a slower clock',
  async (t) => {
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
    t.equal(
      net.core('n2').clusterTimeMs(),
      seen + 400 + 100 * 0,
      'then runs on the new leader clock',
    );
  },
);

t.test(
  'docs/concepts.md cluster time never decreases along the log or across calls through leader changes',
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

t.test(
  'docs/concepts.md/§2 a stale leader resumed after a pause does not push a later term ahead of real time',
  async (t) => {
    // n1 leads term 1 and is "paused" (isolated, not ticked, its clock keeps running); n2 wins a later
    // term after a long leaderless gap (cluster time frozen meanwhile); n1 resumes, still believes it
    // leads and reads its clock, then follows n2 and has its stale entry truncated; n2 dies and n1 is
    // elected. Real time is n3's clock (every clock advances 100 ms per round).
    const ids = ['n1', 'n2', 'n3'];
    const net = new ScriptedNetwork(ids, {
      draws: { n1: 0, n2: 0, n3: 0 },
      perNode: { n2: { electionTimeoutTicks: 40 }, n3: { electionTimeoutTicks: 45 } },
    });
    const round = (ticked: readonly string[]): void => {
      for (const id of ids) {
        if (net.cores.has(id) && ticked.includes(id)) net.tick(id);
        else net.clocks.get(id)!.advance(100);
      }
      net.stabilize();
    };
    const realMs = (): number => net.clocks.get('n3')!.nowMs();
    const lastEntry = (id: string) => net.disks.get(id)!.entries.at(-1)!;

    net.elect('n1');
    net.propose('n1', 'before-pause');
    for (let i = 0; i < 3; i++) round(ids);

    net.isolate('n1'); // paused: no input, no ticks; its monotonic clock keeps running
    for (let i = 0; i < 200 && net.core('n2').softState().role !== 'leader'; i++)
      round(['n2', 'n3']);
    t.equal(net.core('n2').softState().role, 'leader', 'n2 elected while n1 is paused');
    for (let i = 0; i < 3; i++) round(['n2', 'n3']);

    // n1 resumes: still leader of term 1 in its own view, it reads its clock (pause included).
    t.equal(net.core('n1').softState().role, 'leader');
    const stale = net.propose('n1', 'stale');
    t.ok(stale.ok, 'the stale leader still accepts a proposal');
    net.heal();
    net.stabilize();
    for (let i = 0; i < 5; i++) round(ids);
    t.equal(net.core('n1').softState().leaderId, 'n2', 'n1 follows n2');
    t.equal(lastEntry('n1').term, lastEntry('n2').term, "n1's stale entry was truncated");
    t.equal(net.appliedTexts('n1').includes('stale'), false);

    net.propose('n2', 'last-of-n2');
    round(ids);
    const stampedAtMs = realMs();
    const lastOfN2 = lastEntry('n2');
    t.equal(lastEntry('n1').index, lastOfN2.index, 'n1 holds the last entry of n2');
    net.crash('n2');
    for (let i = 0; i < 200 && net.core('n1').softState().role !== 'leader'; i++)
      round(['n1', 'n3']);
    t.equal(net.core('n1').softState().role, 'leader', 'n1 elected after n2 died');
    const noop = lastEntry('n1');
    t.equal(noop.type, 'noop');
    const elapsedMs = realMs() - stampedAtMs;
    t.ok(
      noop.clusterTimeMs >= lastOfN2.clusterTimeMs,
      'cluster time never decreases along the log',
    );
    t.ok(
      noop.clusterTimeMs - lastOfN2.clusterTimeMs <= elapsedMs,
      `new term starts at ${noop.clusterTimeMs}, at most ${lastOfN2.clusterTimeMs} + ${elapsedMs} ms of real time ` +
        'after the last entry of the previous term (no jump)',
    );
  },
);

t.test(
  'docs/concepts.md/§2 a newer leader heard only by heartbeat does not set the next term start (5 nodes)',
  async (t) => {
    // n3 wins term 2 after a long leaderless gap (its timeline far behind real time) and gets its
    // no-op onto n4 only; n2 wins term 3 from term-1 knowledge (timeline close to real time) and
    // reaches n4 with empty heartbeats only; n4 then wins term 4 with its term-2 no-op as last entry.
    // Term 4 must start from that entry's timeline, not from term 3's heartbeat value: the term-2
    // no-op is committed right before term 4's, term 3's time never reached the log.
    const ids = ['n1', 'n2', 'n3', 'n4', 'n5'];
    const net = new ScriptedNetwork(ids);
    const realMs = (): number => net.clocks.get('n5')!.nowMs();
    const round = (ticked: readonly string[], pass: (m: Message) => boolean = () => true): void => {
      for (const id of ids) {
        if (net.cores.has(id) && ticked.includes(id)) net.tick(id);
        else net.clocks.get(id)!.advance(100);
      }
      for (let i = 0; i < 50 && net.queue.length > 0; i++) {
        net.drop((m) => !pass(m));
        net.deliver();
        net.processAll();
      }
      net.drop(() => true);
    };
    const role = (id: string) => net.core(id).softState().role;
    const withEntries = (m: Message) => m.type === 'AppendEntries' && m.entries.length > 0;
    const bounce = (...restart: string[]) => {
      for (const id of restart) {
        net.crash(id);
        net.restart(id);
      }
    };

    net.elect('n1');
    net.propose('n1', 'a');
    for (let i = 0; i < 3; i++) round(ids);
    const minority = new Set(['n1', 'n2']);
    const crosses = (m: Message) => minority.has(m.from) !== minority.has(m.to);
    for (let i = 0; i < 40; i++) round(['n1', 'n2'], (m) => !crosses(m)); // n3..n5 stalled: no leader
    const term2Pass = (m: Message) =>
      !crosses(m) && !(m.from === 'n3' && m.to === 'n5' && withEntries(m));
    for (let i = 0; i < 100 && role('n3') !== 'leader'; i++) round(ids, term2Pass);
    t.equal(role('n3'), 'leader', 'n3 leads term 2');
    const term2NoopAtMs = realMs();
    round(ids, term2Pass);
    net.crash('n3');
    for (let i = 0; i < 3; i++) round(['n1', 'n2'], (m) => !crosses(m));

    bounce('n1', 'n5');
    const term3Pass = (m: Message) =>
      !withEntries(m) && !(m.to === 'n4' && m.type !== 'AppendEntries');
    for (let i = 0; i < 100 && role('n2') !== 'leader'; i++) round(['n2'], term3Pass);
    t.equal(role('n2'), 'leader', 'n2 leads a later term from term-1 knowledge');
    round(['n2'], term3Pass);
    t.equal(net.core('n4').softState().leaderId, 'n2', "n4 heard n2's heartbeats");
    const term2Noop = net.disks.get('n4')!.entries.at(-1)!;
    t.equal(term2Noop.term, 2, "n4's log still ends with the term-2 no-op");

    net.crash('n2');
    net.restart('n3');
    bounce('n1', 'n5');
    for (let i = 0; i < 100 && role('n4') !== 'leader'; i++) round(['n4']);
    t.equal(role('n4'), 'leader', 'n4 elected');
    round(['n4']);
    const noop = net.disks.get('n4')!.entries.at(-1)!;
    t.equal(noop.index, term2Noop.index + 1);
    t.ok(net.core('n4').hardState().commitIndex >= noop.index, 'both no-ops are committed');
    const elapsedMs = realMs() - term2NoopAtMs;
    t.ok(
      noop.clusterTimeMs - term2Noop.clusterTimeMs <= elapsedMs,
      `term 4 starts at ${noop.clusterTimeMs}, at most ${term2Noop.clusterTimeMs} + ${elapsedMs} ms of real time ` +
        'after the committed entry before it (no jump)',
    );
  },
);

t.test(
  'docs/concepts.md a remaining time read from a leader after a leaderless gap is not cut short by later leaders',
  async (t) => {
    // The real-cluster "leases are frozen while no leader exists" scenario, on hand-moved clocks
    // (every clock moves 100 ms per round: one real time). A leader stamps a grant; it then stamps
    // one more entry nobody else gets (its log ends ahead of what the others heard) and dies with a
    // follower; the survivor sits leaderless for 6 s; the follower restarts and a leader is elected,
    // whose cluster time a read would turn into remainingMs; the old leader restarts with its
    // unreplicated tail; later the reading leader dies too and the other two elect again. No committed entry and no leader reading may run
    // ahead of the read's cluster time by more than the real time since the read (else a lease
    // would end before the remainingMs that read showed).
    const ttlMs = 5000;
    const winners = new Set<string>();
    for (let seed = 1; seed <= 12; seed++) {
      const ids = ['n1', 'n2', 'n3'];
      const net = new ScriptedNetwork(ids, {
        draws: 'seeded',
        seed,
        config: { preVote: true, checkQuorum: true },
      });
      let realMs = 0;
      const round = (): void => {
        realMs += 100;
        for (const id of ids) {
          if (net.cores.has(id)) net.tick(id);
          else net.clocks.get(id)!.advance(100);
        }
        net.stabilize();
      };
      const leaderOf = (): string | null => {
        const leaders = ids.filter(
          (id) => net.cores.has(id) && net.core(id).softState().role === 'leader',
        );
        return leaders.length === 1 ? leaders[0]! : null;
      };
      const elected = (): string => {
        for (let i = 0; i < 200 && leaderOf() === null; i++) round();
        const id = leaderOf();
        assert.ok(id !== null, `seed ${seed}: no leader elected`);
        return id;
      };

      const first = elected();
      const [follower, survivor] = ids.filter((id) => id !== first) as [string, string];
      const grant = net.propose(first, 'grant');
      assert.ok(grant.ok);
      const expiresAtMs = grant.clusterTimeMs + ttlMs;
      for (let i = 0; i < 5; i++) round();
      net.isolate(first);
      for (const id of ids) net.clocks.get(id)!.advance(200); // the tail is stamped after the last heartbeat
      realMs += 200;
      t.ok(net.propose(first, 'tail').ok);
      net.crash(first);
      net.crash(follower);
      net.heal();
      for (let i = 0; i < 60; i++) round(); // leaderless for 6 s
      t.equal(leaderOf(), null, `seed ${seed}: no leader without a majority`);
      net.restart(follower);
      const reader = elected();
      winners.add(reader === survivor ? 'survivor' : 'restarted');
      for (let i = 0; i < 3; i++) round(); // the new term's no-op commits: a read may be served
      const readMs = net.core(reader).clusterTimeMs();
      const readAtRealMs = realMs;
      const remainingMs = expiresAtMs - readMs;
      t.ok(remainingMs > 0 && remainingMs <= ttlMs, `seed ${seed}: remaining ${remainingMs} ms`);

      net.restart(first);
      const ahead: string[] = [];
      const check = (): void => {
        const boundMs = readMs + (realMs - readAtRealMs);
        for (const id of ids) {
          if (!net.cores.has(id)) continue;
          const entries = net.disks.get(id)!.entries;
          const commit = net.core(id).hardState().commitIndex;
          for (const e of entries)
            if (e.index <= commit && e.clusterTimeMs > boundMs)
              ahead.push(`${id} entry ${e.index} at ${e.clusterTimeMs} > ${boundMs}`);
          if (net.core(id).softState().role === 'leader' && net.core(id).clusterTimeMs() > boundMs)
            ahead.push(`${id} reads ${net.core(id).clusterTimeMs()} > ${boundMs}`);
        }
      };
      for (let i = 0; i < 10; i++) {
        round();
        check();
      }
      net.crash(reader);
      const next = elected();
      if (next === first) winners.add('old leader again');
      for (let i = 0; i < 60; i++) {
        if (net.core(next).softState().role === 'leader') net.propose(next, `advance ${i}`);
        round();
        check();
      }
      t.same(ahead, [], `seed ${seed}: read by ${reader}, then ${next} led; no time ahead of it`);
    }
    t.same(
      [...winners].sort(),
      ['old leader again', 'restarted', 'survivor'],
      'the survivor and the restarted node read; the old leader, tail truncated, led again',
    );
  },
);
