/**
 * etcd driven through its HTTP/JSON gateway (grpc-gateway, /v3/…) with the same JSON client as
 * Tenure. The gateway costs etcd a hop (JSON → gRPC inside the member), which is why the bench
 * also drives etcd natively (etcd-grpc-system.ts).
 *
 * Mapping of the workloads (each one replicated write per Tenure write, like for like):
 * - pair: the client's session lease (granted at setup) + /v3/kv/txn "create the key if absent,
 *   attached to the lease" (acquire), then /v3/kv/txn "delete it if its create revision is still
 *   ours" (release) — etcd's lock recipe without the wait.
 * - grant: /v3/lease/grant of a fresh lease, then /v3/lease/revoke.
 * - renew: /v3/lease/keepalive of the client's lease (etcd does not replicate it).
 * - handoff: /v3/lock/lock on one name with the client's lease (blocks until held, v3lock), then
 *   /v3/lock/unlock.
 * - read: /v3/kv/range of one key (linearizable, etcd's default).
 */
import { EtcdCluster } from './etcd-cluster.js';
import { firstAcknowledgedMs } from './first-ack.js';
import { JsonHttp } from './json-http.js';
import type { DrivenSystem, FailoverCapable, Op, WorkloadId } from './system.js';

/** TTL in seconds of the leases the workloads grant (etcd's unit). */
export const ETCD_LEASE_TTL_S = 60;
/** Bound of one failover write attempt. */
const ATTEMPT_TIMEOUT_MS = 1_000;

const b64 = (text: string): string => Buffer.from(text).toString('base64');

/** etcd's JSON gateway in front of a running cluster's leader. */
export class EtcdHttpSystem implements DrivenSystem, FailoverCapable {
  readonly label = 'etcd-http';
  readonly #cluster: EtcdCluster;
  readonly #leader: string;
  readonly #http: JsonHttp;

  /** Client of `leader` (a member name) with `connections` kept-alive sockets. */
  constructor(cluster: EtcdCluster, leader: string, connections: number) {
    this.#cluster = cluster;
    this.#leader = leader;
    this.#http = new JsonHttp(this.#member(leader).clientUrl, connections);
  }

  #member(name: string): EtcdCluster['members'][number] {
    const member = this.#cluster.members.find((m) => m.name === name);
    if (member === undefined) throw new Error(`no etcd member ${name}`);
    return member;
  }

  pids(): ReadonlyMap<string, number> {
    return this.#cluster.pids(this.#leader);
  }

  async #grant(): Promise<string> {
    const a = await this.#http.call('POST', '/v3/lease/grant', { TTL: ETCD_LEASE_TTL_S });
    if (a.status !== 200 || typeof a.body?.ID !== 'string')
      throw new Error(`lease grant answered ${a.status}`);
    return a.body.ID as string;
  }

  async prepare(workload: WorkloadId, client: number, tag: string): Promise<Op> {
    const http = this.#http;
    const key = b64(`/${workload}-${tag}-${client}`);
    switch (workload) {
      case 'pair': {
        const lease = await this.#grant();
        return async () => {
          const acquire = await http.call('POST', '/v3/kv/txn', {
            compare: [{ key, target: 'CREATE', result: 'EQUAL', create_revision: '0' }],
            success: [{ request_put: { key, value: b64('h'), lease } }],
          });
          if (acquire.status !== 200 || acquire.body?.succeeded !== true) return false;
          const revision = acquire.body.header.revision as string;
          const release = await http.call('POST', '/v3/kv/txn', {
            compare: [{ key, target: 'CREATE', result: 'EQUAL', create_revision: revision }],
            success: [{ request_delete_range: { key } }],
          });
          return release.status === 200 && release.body?.succeeded === true;
        };
      }
      case 'grant':
        return async () => {
          const ID = await this.#grant();
          return (await http.call('POST', '/v3/lease/revoke', { ID })).status === 200;
        };
      case 'renew': {
        const ID = await this.#grant();
        return async () => {
          const a = await http.call('POST', '/v3/lease/keepalive', { ID });
          return a.status === 200 && Number(a.body?.result?.TTL) > 0;
        };
      }
      case 'handoff': {
        const lease = await this.#grant();
        const name = b64(`/hot-${tag}`);
        return async () => {
          const lock = await http.call('POST', '/v3/lock/lock', { name, lease });
          if (lock.status !== 200 || typeof lock.body?.key !== 'string') return false;
          return (
            (await http.call('POST', '/v3/lock/unlock', { key: lock.body.key })).status === 200
          );
        };
      }
      case 'read': {
        const put = await http.call('POST', '/v3/kv/put', { key, value: b64('v') });
        if (put.status !== 200) throw new Error(`read setup: put answered ${put.status}`);
        return async () => {
          const a = await http.call('POST', '/v3/kv/range', { key });
          return a.status === 200 && Array.isArray(a.body?.kvs) && a.body.kvs.length === 1;
        };
      }
    }
  }

  async failoverMs(deadlineMs: number): Promise<number> {
    const survivors = this.#cluster.members.filter((m) => m.name !== this.#leader);
    const clients = survivors.map((m) => new JsonHttp(m.clientUrl, 1));
    try {
      const killedAtMs = performance.now();
      await this.#cluster.kill(this.#leader);
      return await firstAcknowledgedMs(
        killedAtMs,
        survivors.length,
        async (survivor, attempt) => {
          const body = { key: b64(`/failover-${attempt}`), value: b64('v') };
          const a = await clients[survivor]!.call('POST', '/v3/kv/put', body, ATTEMPT_TIMEOUT_MS);
          return a.status === 200;
        },
        deadlineMs,
      );
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
  }

  async close(): Promise<void> {
    await this.#http.close();
  }
}
