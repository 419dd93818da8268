/**
 * Proof that a request was forwarded by a node of this cluster (docs/security.md, "Forwarded
 * requests"). A follower counts a client's request against the token's rate where it serves it,
 * then forwards it; the leader must not count it again, but anyone can send `Tenure-Forwarded`
 * themselves. So the follower adds `Tenure-Forwarded-Proof: <ms>.<mac>`: an HMAC-SHA256 over the
 * method, URL, sending node and time, keyed from what every node holds and no client does — the
 * replicated KDF hash of the `root` token (never shown by the API) and the cluster id. The leader
 * skips the rate only for a proof that verifies and is at most PROOF_AGE_MAX_MS old (either way).
 * Without a root token (auth off, or none made yet) there is no key: nothing is skipped.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { ROOT_TOKEN_NAME, type TokenRecord } from '@tenure/coord-state';

/** Header carrying the proof. */
export const FORWARD_PROOF_HEADER = 'tenure-forwarded-proof';

/** Largest clock difference (and age) of an accepted proof, ms. */
export const PROOF_AGE_MAX_MS = 60_000;

/** What is signed: one forwarded request. */
export interface ForwardedRequest {
  readonly method: string;
  readonly url: string;
  /** The forwarding node's id (the `Tenure-Forwarded` value). */
  readonly fromNodeId: string;
}

/** Signs and verifies forward proofs of one node. */
export class ForwardProof {
  readonly #clusterId: string;
  readonly #root: () => TokenRecord | null;
  #keyFor: string | null = null;
  #key: Buffer | null = null;

  /** `tokenOf` reads the replicated token table (coord `authToken`). */
  constructor(clusterId: string, tokenOf: (name: string) => TokenRecord | null) {
    this.#clusterId = clusterId;
    this.#root = () => tokenOf(ROOT_TOKEN_NAME);
  }

  /** The proof header value for `req` sent at `nowMs` (epoch ms), or null without a key. */
  sign(req: ForwardedRequest, nowMs: number): string | null {
    const key = this.#currentKey();
    if (key === null) return null;
    const ms = Math.floor(nowMs);
    return `${ms}.${mac(key, req, ms)}`;
  }

  /** True when this node has a key (auth on and a `root` token exists): it can sign and verify. */
  hasKey(): boolean {
    return this.#currentKey() !== null;
  }

  /** True when `proof` is this cluster's proof of `req`, made within PROOF_AGE_MAX_MS of nowMs. */
  verify(req: ForwardedRequest, proof: string | undefined, nowMs: number): boolean {
    if (proof === undefined) return false;
    const m = /^([0-9]{1,16})\.([A-Za-z0-9_-]{43})$/.exec(proof);
    if (m === null) return false;
    const ms = Number(m[1]);
    if (Math.abs(nowMs - ms) > PROOF_AGE_MAX_MS) return false;
    const key = this.#currentKey();
    if (key === null) return false;
    const want = Buffer.from(mac(key, req, ms));
    const got = Buffer.from(m[2]!);
    return want.length === got.length && timingSafeEqual(want, got);
  }

  #currentKey(): Buffer | null {
    const root = this.#root();
    if (root === null) return null;
    if (this.#keyFor !== root.hash) {
      this.#keyFor = root.hash;
      this.#key = createHmac('sha256', `${root.salt}:${root.hash}`)
        .update(`tenure-forward-proof\0${this.#clusterId}`)
        .digest();
    }
    return this.#key;
  }
}

function mac(key: Buffer, req: ForwardedRequest, ms: number): string {
  return createHmac('sha256', key)
    .update(`${req.method}\0${req.url}\0${req.fromNodeId}\0${ms}`)
    .digest('base64url');
}
