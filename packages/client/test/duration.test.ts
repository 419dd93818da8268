// Proves the CLI duration parser accepts ms/s/m/h and bare integers and rejects malformed input.
import t from 'tap';
import { formatDurationMs, parseDurationMs } from '../src/index.js';

t.test('parses units and bare milliseconds', async (t) => {
  t.equal(parseDurationMs('500ms'), 500);
  t.equal(parseDurationMs('10s'), 10_000);
  t.equal(parseDurationMs('1.5s'), 1500);
  t.equal(parseDurationMs('1m'), 60_000);
  t.equal(parseDurationMs('2h'), 7_200_000);
  t.equal(parseDurationMs('250'), 250);
  t.equal(parseDurationMs(' 3s '), 3000);
  t.equal(parseDurationMs('0'), 0);
});

t.test('rejects malformed, negative and fractional-millisecond input', async (t) => {
  for (const bad of ['', 's', '-1s', '10x', '1.5', '0.0001s', '1e3', '10 sec', '1s2']) {
    t.throws(() => parseDurationMs(bad), RangeError, `rejects "${bad}"`);
  }
});

t.test('formats for humans', async (t) => {
  t.equal(formatDurationMs(850), '850ms');
  t.equal(formatDurationMs(12_500), '12.5s');
  t.equal(formatDurationMs(200_000), '3m20s');
  t.equal(formatDurationMs(120_000), '2m');
});
