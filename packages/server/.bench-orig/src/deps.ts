/**
 * Everything `buildApp` needs, injected (no module singletons): the Raft node, the local
 * coordination state (read-only queries), the change hub, the envelope encoder, the forwarder,
 * a logger and the metrics registry.
 */
import type { ApplyOutput, CommandEnvelope, CoordState } from '@tenure/coord-state';
import type { RaftNodeApi } from '@tenure/raft';
import type { Logger } from 'pino';
import type { ChangeHub } from './change-hub.js';
import type { ServerConfig } from './config.js';
import type { Forwarder } from './forwarder.js';
import type { ServerMetrics } from './metrics.js';

export interface ServerDeps {
  readonly config: ServerConfig;
  readonly raft: RaftNodeApi<ApplyOutput>;
  /** Local replica of the state; the server only queries it (all mutation goes through Raft). */
  readonly coord: CoordState;
  readonly hub: ChangeHub;
  readonly encodeEnvelope: (envelope: CommandEnvelope) => Uint8Array;
  readonly forwarder: Forwarder;
  readonly logger: Logger;
  readonly metrics: ServerMetrics;
  /** Called on a failed assertion (a bug): main.ts exits the process. Tests leave it unset. */
  readonly onFatal?: (err: unknown) => void;
}
