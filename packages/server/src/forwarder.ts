/**
 * One-hop forwarding of writes and linearizable reads from a follower to the leader (docs/api.md),
 * over kept-alive connections: HTTP, or HTTPS verifying the leader's certificate when the node
 * serves TLS (docs/security.md). The forwarded request carries `Tenure-Forwarded` so the receiver
 * never forwards it again.
 */
import { Agent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { TLS_MIN_VERSION } from '@tenure/raft';
import { FORWARD_PROOF_HEADER } from './auth/forward-proof.js';
import type { HttpTlsConfig } from './config.js';
import { FORWARDED_HEADER } from './request-context.js';

/** What is sent to the leader. `url` is path + query, exactly as the client sent it. */
export interface ForwardRequest {
  readonly method: string;
  readonly url: string;
  /** JSON body text (absent for GET or a body-less DELETE). */
  readonly body?: string;
  readonly idempotencyKey: string | null;
  /** Remaining base deadline, ms (becomes the leader's `Request-Timeout-Ms`). */
  readonly requestTimeoutMs: number;
  /** Our node id (value of the Tenure-Forwarded header, for logs). */
  readonly fromNodeId: string;
  /** Tenure-Forwarded-Proof value (auth/forward-proof.ts), when auth is on and a key exists. */
  readonly proof?: string;
  /** The client's Authorization header, passed on so the leader checks the same token. */
  readonly authorization?: string;
  /** Internal headers of one route (e.g. the snapshot route's read-index question). */
  readonly headers?: Readonly<Record<string, string>>;
}

export interface ForwardResponse {
  readonly statusCode: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** Sends a request to a peer's HTTP address. Rejects on network errors, abort or `timeoutMs`. */
export interface Forwarder {
  forward(
    httpAddress: string,
    req: ForwardRequest,
    timeoutMs: number,
    signal: AbortSignal,
  ): Promise<ForwardResponse>;
  close(): void;
}

/** Response headers copied back to the client. */
const PASS_HEADERS = ['content-type', 'retry-after', 'tenure-leader', 'tenure-stale'];

/** Connection pool bounds of the forwarder (per leader address). */
const AGENT_OPTIONS = {
  keepAlive: true,
  maxSockets: 512,
  maxFreeSockets: 64,
  keepAliveMsecs: 1000,
};

/**
 * The production forwarder: keep-alive, bounded sockets per leader. With `tls` (the node's own
 * `--tls-*` settings; every node serves the same scheme) it speaks HTTPS, verifies the leader's
 * certificate against `tls.ca` (default: Node's roots) and its address, and presents the node's
 * certificate in case the leader requires client certificates.
 */
export class HttpForwarder implements Forwarder {
  readonly #agent: Agent;
  readonly #request: typeof httpRequest;

  constructor(tls: HttpTlsConfig | null = null) {
    if (tls === null) {
      this.#agent = new Agent(AGENT_OPTIONS);
      this.#request = httpRequest;
    } else {
      this.#agent = new HttpsAgent({
        ...AGENT_OPTIONS,
        cert: tls.cert,
        key: tls.key,
        ...(tls.ca === null ? {} : { ca: tls.ca }),
        minVersion: TLS_MIN_VERSION,
      });
      this.#request = httpsRequest;
    }
  }

  forward(
    httpAddress: string,
    req: ForwardRequest,
    timeoutMs: number,
    signal: AbortSignal,
  ): Promise<ForwardResponse> {
    const colon = httpAddress.lastIndexOf(':');
    const host = httpAddress.slice(0, colon).replace(/^\[|\]$/g, '');
    const port = Number(httpAddress.slice(colon + 1));
    const headers: Record<string, string> = {
      [FORWARDED_HEADER]: req.fromNodeId,
      'request-timeout-ms': String(Math.max(1, Math.floor(req.requestTimeoutMs))),
    };
    if (req.body !== undefined) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = String(Buffer.byteLength(req.body));
    }
    if (req.idempotencyKey !== null) headers['idempotency-key'] = req.idempotencyKey;
    if (req.authorization !== undefined) headers['authorization'] = req.authorization;
    Object.assign(headers, req.headers);
    if (req.proof !== undefined) headers[FORWARD_PROOF_HEADER] = req.proof;
    return new Promise((resolve, reject) => {
      const r = this.#request(
        {
          host,
          port,
          method: req.method,
          path: req.url,
          headers,
          agent: this.#agent,
          signal,
          timeout: timeoutMs,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const out: Record<string, string> = {};
            for (const h of PASS_HEADERS) {
              const v = res.headers[h];
              if (typeof v === 'string') out[h] = v;
            }
            resolve({
              statusCode: res.statusCode ?? 502,
              headers: out,
              body: Buffer.concat(chunks).toString('utf8'),
            });
          });
          res.on('error', reject);
        },
      );
      r.on('timeout', () => r.destroy(new Error(`forward to ${httpAddress} timed out`)));
      r.on('error', reject);
      r.end(req.body);
    });
  }

  close(): void {
    this.#agent.destroy();
  }
}
