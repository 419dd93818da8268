// Proves long-poll wake-ups: waitForChange resolves on the first satisfying change of its key, or null at the deadline or on abort, and leaves no listener behind.
import t from 'tap';
import { ChangeHub, waitForChange } from '../src/change-hub.js';

t.test('resolves when the condition holds after a change of the key', async (t) => {
  const hub = new ChangeHub();
  let v = 0;
  const p = waitForChange(hub, 'lease:a', () => (v >= 2 ? v : null), performance.now() + 5000);
  v = 1;
  hub.publish(['lease:a'], 1);
  v = 2;
  hub.publish(['lease:b'], 2);
  t.equal(hub.watchedKeys(), 1, 'other keys do not wake it');
  hub.publish(['lease:a'], 3);
  t.equal(await p, 2);
  t.equal(hub.watchedKeys(), 0);
});

t.test('already true: resolves at once', async (t) => {
  const hub = new ChangeHub();
  t.equal(await waitForChange(hub, 'k', () => 'yes', performance.now() + 5000), 'yes');
  t.equal(hub.watchedKeys(), 0);
});

t.test('deadline and abort resolve null', async (t) => {
  const hub = new ChangeHub();
  t.equal(await waitForChange(hub, 'k', () => null, performance.now() + 20), null);
  const ac = new AbortController();
  const p = waitForChange(hub, 'k', () => null, performance.now() + 5000, ac.signal);
  ac.abort();
  t.equal(await p, null);
  t.equal(hub.watchedKeys(), 0);
});

t.test('onApply sees every entry', async (t) => {
  const hub = new ChangeHub();
  const seen: number[] = [];
  const off = hub.onApply((i) => seen.push(i));
  hub.publish([], 1);
  hub.publish(['x'], 2);
  off();
  hub.publish([], 3);
  t.same(seen, [1, 2]);
});
