// Proves testkit's shared helpers: the seeded generator replays from its seed, free ports are
// distinct and bindable, percentiles match nearest-rank values within HDR's 0.1%, and pollUntil
// waits through false answers and thrown errors and names what it waited for.
import { createServer } from 'node:net';
import t from 'tap';
import { SeededRandom, freePorts, percentiles, pollUntil, seededFloats } from './index.js';

t.test('the same seed gives the same sequence; floats stay in [0, 1)', async (t) => {
  const a = seededFloats(42);
  const b = seededFloats(42);
  const drawsA = Array.from({ length: 1000 }, a);
  t.same(Array.from({ length: 1000 }, b), drawsA);
  t.ok(drawsA.every((x) => x >= 0 && x < 1));
  t.not(seededFloats(43)(), drawsA[0], 'another seed, another stream');
  t.equal(new SeededRandom(42).float(), drawsA[0], 'seededFloats draws from SeededRandom');
});

t.test('freePorts gives distinct ports that can be bound', async (t) => {
  const ports = await freePorts(4);
  t.equal(new Set(ports).size, 4);
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(ports[0], '127.0.0.1', resolve));
  await new Promise((resolve) => server.close(resolve));
});

t.test('percentiles: nearest rank within 0.1%, exact max, negatives, empty', async (t) => {
  const values = Array.from({ length: 1000 }, (_, i) => i + 1); // 1..1000
  const p = percentiles(values);
  t.ok(Math.abs(p.p50! - 500) <= 0.5, `p50 ${p.p50}`);
  t.ok(Math.abs(p.p90! - 900) <= 0.9, `p90 ${p.p90}`);
  t.ok(Math.abs(p.p99! - 990) <= 1, `p99 ${p.p99}`);
  t.equal(p.max, 1000);
  const shifted = percentiles(values.map((v) => v - 2000));
  t.ok(Math.abs(shifted.p50! - -1500) <= 1, `p50 of negatives ${shifted.p50}`);
  t.equal(shifted.max, -1000);
  t.same(percentiles([]), { p50: null, p90: null, p99: null, max: null });
});

t.test(
  'pollUntil: resolves with the first value, retries false and throws, names what timed out',
  async (t) => {
    let calls = 0;
    const value = await pollUntil(
      'the third call',
      () => {
        calls++;
        if (calls === 1) throw new Error('not yet');
        return calls === 3 ? { calls } : false;
      },
      { intervalMs: 1 },
    );
    t.same(value, { calls: 3 });
    await t.rejects(
      pollUntil('never', () => Promise.reject(new Error('down')), { timeoutMs: 20, intervalMs: 1 }),
      /timed out after 20 ms waiting for never \(last error: down\)/,
    );
  },
);
