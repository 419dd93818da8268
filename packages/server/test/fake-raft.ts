/**
 * An in-process single-node `RaftNodeApi` fake for fast `app.inject` tests: proposals apply
 * immediately on the wrapped state machine, with cluster time from an injectable clock.
 * `setRole` turns it into a follower (proposals and reads reject with not_leader).
 */
import type { Applied, RaftNodeApi, RaftStatus, RequestOptions, StateMachine } from '@tenure/raft';

type LogIndex = RaftStatus['commitIndex'];
type Term = RaftStatus['term'];

/** The fake's not-leader error: same `code`/`leaderHint` contract as @tenure/raft's NotLeaderError. */
export class FakeNotLeaderError extends Error {
  readonly code = 'not_leader' as const;
  constructor(readonly leaderHint: string | null) {
    super(`not the leader; leader is ${leaderHint ?? 'unknown'}`);
  }
}

export class FakeRaft<R> implements RaftNodeApi<R> {
  readonly id: string;
  #sm: StateMachine<R>;
  #index = 0;
  #term = 1;
  #role: 'leader' | 'follower' = 'leader';
  #leaderId: string | null;
  #applied = new Set<(i: LogIndex) => void>();
  #leaderListeners = new Set<(l: string | null, t: Term) => void>();
  /** Cluster time source (ms); tests may replace it to move time by hand. */
  now: () => number;
  /** Number of proposals seen (tests assert "no periodic traffic"). */
  proposals = 0;

  constructor(id: string, sm: StateMachine<R>, now: () => number = () => performance.now()) {
    this.id = id;
    this.#sm = sm;
    this.now = now;
    this.#leaderId = id;
  }

  async propose(data: Uint8Array, _opts?: RequestOptions): Promise<Applied<R>> {
    if (this.#role !== 'leader') throw new FakeNotLeaderError(this.#leaderId);
    this.proposals++;
    const index = ++this.#index;
    const clusterTimeMs = Math.floor(this.now());
    const result = this.#sm.apply({ index: index as LogIndex, term: this.#term as Term, clusterTimeMs, type: 'command', data });
    for (const fn of this.#applied) fn(index as LogIndex);
    return { index: index as LogIndex, clusterTimeMs, result };
  }

  async readBarrier(_opts?: RequestOptions): Promise<LogIndex> {
    if (this.#role !== 'leader') throw new FakeNotLeaderError(this.#leaderId);
    return this.#index as LogIndex;
  }

  async transferLeadership(to?: string): Promise<void> {
    this.setRole('follower', to ?? null);
  }

  status(): RaftStatus {
    return {
      id: this.id,
      role: this.#role,
      term: this.#term as Term,
      leaderId: this.#leaderId,
      commitIndex: this.#index as LogIndex,
      appliedIndex: this.#index as LogIndex,
      lastLogIndex: this.#index as LogIndex,
      clusterTimeMs: Math.floor(this.now()),
      members: [{ id: this.id, role: this.#role }],
    };
  }

  onApplied(listener: (lastApplied: LogIndex) => void): () => void {
    this.#applied.add(listener);
    return () => this.#applied.delete(listener);
  }

  onLeaderChange(listener: (leaderId: string | null, term: Term) => void): () => void {
    this.#leaderListeners.add(listener);
    return () => this.#leaderListeners.delete(listener);
  }

  /** Become leader (leaderId = self) or follower of `leaderId` (null = no leader known). */
  setRole(role: 'leader' | 'follower', leaderId: string | null = role === 'leader' ? this.id : null): void {
    this.#role = role;
    this.#leaderId = role === 'leader' ? this.id : leaderId;
    this.#term++;
    for (const fn of this.#leaderListeners) fn(this.#leaderId, this.#term as Term);
  }

  async stop(): Promise<void> {}
}
