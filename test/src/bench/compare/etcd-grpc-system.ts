/**
 * etcd driven natively over gRPC with the `etcd3` npm client (what a Node user would pick), one
 * client (one HTTP/2 channel) to the leader shared by all simulated clients.
 *
 * Mapping of the workloads (see etcd-http-system.ts for the gateway twin):
 * - pair: session lease at setup; acquire = transaction "create if absent, with the lease",
 *   release = transaction "delete if the create revision is still ours".
 * - grant: `client.lease(ttl)` granted, then revoked.
 * - renew: one LeaseKeepAlive stream per client kept open, one request/answer per op (cheaper for
 *   etcd than `Lease.keepaliveOnce()`, which opens a stream per call).
 * - handoff: `client.election(name).campaign(value)`: wait until elected, then resign. etcd3 has no
 *   blocking lock (its `Lock.acquire` fails when held); the campaign is its waiting recipe and
 *   costs a fresh lease per hand-off.
 * - read: `client.get(key)` (linearizable, etcd's default).
 */
import { Etcd3, type Lease } from 'etcd3';
import type { EtcdCluster } from './etcd-cluster.js';
import { ETCD_LEASE_TTL_S } from './etcd-http-system.js';
import type { DrivenSystem, Op, WorkloadId } from './system.js';

/** Answers of a LeaseKeepAlive stream, awaited one at a time. */
interface KeepAliveStream {
  write(request: { ID: string }): void;
  on(event: 'data', handler: (answer: { TTL: string }) => void): void;
  on(event: 'error', handler: (err: Error) => void): void;
  end(): void;
}

/** etcd3 client of a running cluster's leader. */
export class EtcdGrpcSystem implements DrivenSystem {
  readonly label = 'etcd-grpc';
  readonly #cluster: EtcdCluster;
  readonly #leader: string;
  readonly #client: Etcd3;
  readonly #leases: Lease[] = [];
  readonly #streams: KeepAliveStream[] = [];

  /** Client of member `leader`. */
  constructor(cluster: EtcdCluster, leader: string) {
    this.#cluster = cluster;
    this.#leader = leader;
    const member = cluster.members.find((m) => m.name === leader);
    if (member === undefined) throw new Error(`no etcd member ${leader}`);
    this.#client = new Etcd3({ hosts: member.clientUrl });
  }

  pids(): ReadonlyMap<string, number> {
    return this.#cluster.pids(this.#leader);
  }

  async #sessionLease(): Promise<string> {
    const lease = this.#client.lease(ETCD_LEASE_TTL_S, { autoKeepAlive: false });
    this.#leases.push(lease);
    return lease.grant();
  }

  async prepare(workload: WorkloadId, client: number, tag: string): Promise<Op> {
    const etcd = this.#client;
    const key = `/${workload}-${tag}-${client}`;
    switch (workload) {
      case 'pair': {
        const lease = await this.#sessionLease();
        return async () => {
          const put = etcd.put(key).value('h').lease(lease);
          const acquire = await etcd.if(key, 'Create', '==', 0).then(put).commit();
          if (!acquire.succeeded) return false;
          const revision = acquire.header.revision;
          const release = await etcd
            .if(key, 'Create', '==', revision)
            .then(etcd.delete().key(key))
            .commit();
          return release.succeeded;
        };
      }
      case 'grant':
        return async () => {
          const lease = etcd.lease(ETCD_LEASE_TTL_S, { autoKeepAlive: false });
          await lease.grant();
          await lease.revoke();
          return true;
        };
      case 'renew':
        return this.#renewOp(await this.#sessionLease());
      case 'handoff': {
        let n = 0;
        return async () => {
          const campaign = etcd
            .election(`/hot-${tag}`, ETCD_LEASE_TTL_S)
            .campaign(`c${client}-${n++}`);
          await campaign.wait();
          await campaign.resign();
          return true;
        };
      }
      case 'read': {
        await etcd.put(key).value('v');
        return async () => (await etcd.get(key).string()) === 'v';
      }
    }
  }

  async #renewOp(ID: string): Promise<Op> {
    const stream = (await this.#client.leaseClient.leaseKeepAlive()) as unknown as KeepAliveStream;
    this.#streams.push(stream);
    let answer: { resolve: (ttl: number) => void; reject: (err: Error) => void } | null = null;
    let failure: Error | null = null;
    stream.on('data', (response) => {
      const waiting = answer;
      answer = null;
      waiting?.resolve(Number(response.TTL));
    });
    stream.on('error', (err) => {
      failure = err;
      answer?.reject(err);
      answer = null;
    });
    return async () => {
      if (failure !== null) throw failure;
      const ttl = new Promise<number>((resolve, reject) => (answer = { resolve, reject }));
      stream.write({ ID });
      return (await ttl) > 0;
    };
  }

  async close(): Promise<void> {
    for (const stream of this.#streams) stream.end();
    await Promise.all(this.#leases.map((lease) => lease.revoke().catch(() => undefined)));
    this.#client.close();
  }
}
