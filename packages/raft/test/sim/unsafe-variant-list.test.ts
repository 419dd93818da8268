// Proves the one list of unsafe variants (src/testing/unsafe-variants.ts) is what the CLI accepts
// and what the known-bad tests cover: every name has a schedule, and nothing else is a name.
import t from 'tap';
import {
  isUnsafeVariantName,
  UNSAFE_VARIANT_NAMES,
  UNSAFE_VARIANT_RUNS,
} from '../../src/testing/index.js';
import { UNSAFE_SCHEDULES } from './unsafe-schedules.js';

t.test('every unsafe variant has a schedule and a run kind', async (t) => {
  t.same([...UNSAFE_VARIANT_NAMES].sort(), Object.keys(UNSAFE_SCHEDULES).sort());
  for (const name of UNSAFE_VARIANT_NAMES) {
    t.ok(isUnsafeVariantName(name), `${name} is a name`);
    const membership = UNSAFE_SCHEDULES[name].schedule.membership === true;
    t.equal(UNSAFE_VARIANT_RUNS[name], membership ? 'membership' : 'plain', `${name} run kind`);
  }
});

t.test('anything else is not a variant name', async (t) => {
  for (const text of ['', 'toString', 'constructor', '__proto__', 'countlearnervotes'])
    t.notOk(isUnsafeVariantName(text), JSON.stringify(text));
});
