// Proves limit configuration: defaults follow docs/api.md and bad overrides are refused at construction (a configuration bug, not a request error).
import t from 'tap';
import { CoordStateMachine, DEFAULT_LIMITS, resolveLimits } from '../src/index.js';

t.test('defaults follow docs/api.md', async (t) => {
  t.match(DEFAULT_LIMITS, {
    ttlMsMin: 100,
    ttlMsMax: 3_600_000,
    waitMsMax: 60_000,
    valueBytesMax: 65_536,
    idempotencyWindowMs: 600_000,
  });
  t.ok(Object.isFrozen(DEFAULT_LIMITS));
});

t.test('overrides merge; invalid overrides throw', async (t) => {
  t.equal(resolveLimits({ ttlMsMax: 10_000 }).ttlMsMax, 10_000);
  t.throws(() => new CoordStateMachine({ ttlMsMin: 500, ttlMsMax: 100 }));
  t.throws(() => new CoordStateMachine({ leasesMax: -1 }));
  t.throws(() => new CoordStateMachine({ keysMax: 1.5 }));
  t.equal(new CoordStateMachine({ keysMax: 7 }).limits.keysMax, 7);
});
