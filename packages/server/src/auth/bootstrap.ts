/**
 * The `root` token of a new cluster with auth on (docs/security.md): when this node becomes the
 * leader and its state holds no token yet, it proposes one log entry creating `root` (role
 * `admin`) from the operator's secret (`TENURE_ROOT_TOKEN`), hashed here so the secret never
 * enters the log. A second leader racing it gets `already_exists`, which is fine. Once any token
 * exists the secret is ignored: rotate root through the auth routes.
 */
import {
  ADMIN_ROLE,
  ROOT_TOKEN_NAME,
  type ApplyOutput,
  type CommandEnvelope,
  type CoordState,
} from '@tenure/coord-state';
import type { RaftNodeApi } from '@tenure/raft';
import type { Logger } from 'pino';
import { hashSecret } from './secrets.js';

export interface RootBootstrapOptions {
  readonly raft: RaftNodeApi<ApplyOutput>;
  readonly coord: CoordState;
  readonly encodeEnvelope: (envelope: CommandEnvelope) => Uint8Array;
  /** The operator's secret, or null (then only a warning when no token exists). */
  readonly rootToken: string | null;
  readonly nodeId: string;
  readonly logger: Logger;
  /** Deadline of the proposal, ms. */
  readonly proposeTimeoutMs: number;
}

/**
 * The log entry creating `root` (role `admin`, no quota) from the operator's `secret`: only the
 * salted hash enters it (docs/security.md).
 */
export async function rootTokenEnvelope(secret: string): Promise<CommandEnvelope> {
  const { hash, salt } = await hashSecret(secret);
  return {
    v: 1,
    command: {
      type: 'auth.createToken',
      name: ROOT_TOKEN_NAME,
      roles: [ADMIN_ROLE],
      quota: null,
      hash,
      salt,
    },
    idempotency: null,
  };
}

/** Watches leadership and creates `root` once; returns the unsubscribe function. */
export function bootstrapRootToken(o: RootBootstrapOptions): () => void {
  let inFlight = false;
  const tryCreate = async (): Promise<void> => {
    if (inFlight || o.raft.status().role !== 'leader' || o.coord.authTokens().length > 0) return;
    if (o.rootToken === null) {
      o.logger.warn('auth is on but no token exists and TENURE_ROOT_TOKEN is not set');
      return;
    }
    inFlight = true;
    try {
      const envelope = await rootTokenEnvelope(o.rootToken);
      const applied = await o.raft.propose(o.encodeEnvelope(envelope), {
        timeoutMs: o.proposeTimeoutMs,
      });
      const r = applied.result.result;
      o.logger.info({ created: r.ok }, 'root token bootstrap');
    } catch (err) {
      o.logger.warn({ err }, 'root token bootstrap failed; retried at the next leader change');
    } finally {
      inFlight = false;
    }
  };
  const off = o.raft.onLeaderChange((leaderId) => {
    if (leaderId === o.nodeId) void tryCreate();
  });
  void tryCreate();
  return off;
}
