/**
 * `@tenure/testkit`: helpers shared by the cross-package tests, the chaos harness and the benches.
 * A devDependency only: no product package imports it at run time.
 */
export type { Json } from './json.js';
export {
  FencedStore,
  validateWrite,
  fencedStoreRecordsMax,
  fencedStoreResourcesMax,
  type FencedWrite,
  type FencedWriteRecord,
  type FencedResourceState,
} from './fenced-store/store.js';
export {
  startFencedStore,
  FENCED_STORE_LOG,
  fencedStoreBodyBytesMax,
  type FencedStoreServer,
  type FencedStoreOptions,
} from './fenced-store/server.js';
export { SeededRandom, seededFloats } from './random.js';
export { freePort, freePorts } from './ports.js';
export { latencyHistogram, percentiles, type Percentiles } from './percentiles.js';
export { pollUntil, type PollOptions, type Polled } from './poll.js';
