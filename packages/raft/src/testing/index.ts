/**
 * `@tenure/raft/testing`: the deterministic simulator's pieces for tests in this and other packages —
 * seeded randomness, simulated clock, event queue, network and storage, the safety checkers, and
 * `runSimulation` itself. Not for production code.
 */
export { SimRandom } from './prng.js';
export { SimClock, DRIFT_RATIO_MAX } from './sim-clock.js';
export { EventQueue, EVENTS_QUEUED_MAX } from './event-queue.js';
export { SimNetwork, CALM_NETWORK } from './sim-network.js';
export type { NetworkProfile, NetworkStats } from './sim-network.js';
export { SimStorage, EMPTY_HARD_STATE } from './sim-storage.js';
export { SafetyChecker, SimViolation } from './checkers.js';
export type { LogView, SafetyCheckerOptions, ViolationKind } from './checkers.js';
export {
  encodeCommand,
  commandIdOf,
  sameEntry,
  describeEntry,
  COMMAND_SIZE_BYTES,
} from './entry-identity.js';
export { SimNode, READY_ROUNDS_MAX } from './sim-node.js';
export type { CrashPoint, SimNodeHost } from './sim-node.js';
export { SimClients } from './sim-clients.js';
export type { ClientProfile, ClientStats } from './sim-clients.js';
export { SimFaults, DEFAULT_FAULTS } from './sim-faults.js';
export type { FaultProfile, FaultStats, FaultTargets } from './sim-faults.js';
export {
  runSimulation,
  replayCommand,
  TICK_MS,
  HEARTBEAT_TICKS,
  ELECTION_TIMEOUT_TICKS,
  LIVENESS_LEADER_BOUND_MS,
  LIVENESS_COMMIT_BOUND_MS,
  EVENTS_PER_RUN_MAX,
} from './simulation.js';
export type { SimMode, SimOptions, SimResult, SimStats } from './simulation.js';
/** Deliberately broken core behaviours that prove the checkers can fail (never in production). */
export type { UnsafeVariants } from '../core/types.js';
export {
  UNSAFE_VARIANT_NAMES,
  UNSAFE_VARIANT_RUNS,
  isUnsafeVariantName,
} from './unsafe-variants.js';
export type { UnsafeVariantRun } from './unsafe-variants.js';
