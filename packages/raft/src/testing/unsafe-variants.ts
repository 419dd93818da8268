/**
 * The one list of the deliberately broken core behaviours (UnsafeVariants, core/types.ts) and what
 * kind of run finds each: `npm run sim -- --unsafe NAME` accepts exactly these names, and the
 * known-bad tests (test/sim/unsafe-variants.test.ts) give each one a fault schedule under which a
 * bounded range of seeds finds a violation. The record's type makes the compiler refuse a variant
 * added to UnsafeVariants but not here.
 */
import type { UnsafeVariants } from '../core/types.js';

/** Which simulations can find a variant: any run, or only runs with membership changes. */
export type UnsafeVariantRun = 'plain' | 'membership';

/** Every unsafe variant and the runs that exercise it (the rule each breaks is on UnsafeVariants). */
export const UNSAFE_VARIANT_RUNS: {
  readonly [K in keyof Required<UnsafeVariants>]: UnsafeVariantRun;
} = {
  commitPreviousTermByCounting: 'plain',
  skipLogUpToDateCheck: 'plain',
  dontPersistVotedFor: 'plain',
  truncateMatchingEntries: 'plain',
  sendBeforePersistAlways: 'plain',
  concurrentConfigChanges: 'membership',
  configChangeBeforeTermCommit: 'membership',
  countRemovedVotes: 'membership',
  countLearnerVotes: 'membership',
  keepMatchIndexOnShorterLog: 'membership',
};

/** The names of every unsafe variant, in UNSAFE_VARIANT_RUNS order. */
export const UNSAFE_VARIANT_NAMES = Object.keys(
  UNSAFE_VARIANT_RUNS,
) as readonly (keyof UnsafeVariants)[];

/** True if `name` is an unsafe variant's name (a CLI flag value, say). */
export function isUnsafeVariantName(name: string): name is keyof UnsafeVariants {
  return Object.hasOwn(UNSAFE_VARIANT_RUNS, name);
}
