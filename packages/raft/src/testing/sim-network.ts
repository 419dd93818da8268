/**
 * The simulated network between Raft nodes: per-message latency, loss, duplication and reordering,
 * symmetric and one-way partitions, loss bursts, heal.
 *
 * Messages are independent datagrams (like the worst a TCP reconnect can do): each copy gets its own
 * latency, so reordering falls out of the latency distribution. A blocked link drops a message both
 * when it is sent and when it would be delivered (a partition also cuts what is in flight).
 */
import assert from 'node:assert/strict';
import type { Message, NodeId } from '../core/types.js';
import type { EventQueue } from './event-queue.js';
import type { SimRandom } from './prng.js';

/** Latency/loss profile of the network; probabilities in [0, 1], times in ms of sim time. */
export interface NetworkProfile {
  /** Ordinary one-way latency, uniform in [latencyMsMin, latencyMsMax]. */
  readonly latencyMsMin: number;
  readonly latencyMsMax: number;
  /** Probability that a copy is slow instead: latency uniform in [latencyMsMax, slowLatencyMsMax]. */
  readonly slowProbability: number;
  readonly slowLatencyMsMax: number;
  /** Probability that a message is lost. */
  readonly lossProbability: number;
  /** Probability that a message is delivered twice (each copy with its own latency). */
  readonly duplicateProbability: number;
}

/** A calm network: a few ms of latency, nothing lost, duplicated or slow. */
export const CALM_NETWORK: NetworkProfile = {
  latencyMsMin: 1,
  latencyMsMax: 5,
  slowProbability: 0,
  slowLatencyMsMax: 5,
  lossProbability: 0,
  duplicateProbability: 0,
};

/** Counters for reports. */
export interface NetworkStats {
  sent: number;
  delivered: number;
  dropped: number;
  duplicated: number;
}

/**
 * Routes messages through the event queue to `deliver`. Deterministic given its random stream.
 * Links are directed: `blockLink(a, b)` stops a→b only (a one-way partition).
 */
export class SimNetwork {
  readonly #queue: EventQueue;
  readonly #random: SimRandom;
  readonly #deliver: (msg: Message) => void;
  #profile: NetworkProfile;
  /** Directed blocked links, as `from→to`. */
  readonly #blocked = new Set<string>();
  #burstLossProbability = 0;
  #burstUntilMs = 0;
  readonly stats: NetworkStats = { sent: 0, delivered: 0, dropped: 0, duplicated: 0 };

  /**
   * @param deliver called at delivery time; it decides what to do with messages for crashed nodes.
   */
  constructor(
    queue: EventQueue,
    random: SimRandom,
    profile: NetworkProfile,
    deliver: (msg: Message) => void,
  ) {
    this.#queue = queue;
    this.#random = random;
    this.#profile = profile;
    this.#deliver = deliver;
  }

  get profile(): NetworkProfile {
    return this.#profile;
  }

  /** Replace the latency/loss profile from now on (in-flight messages keep their delivery time). */
  setProfile(profile: NetworkProfile): void {
    this.#profile = profile;
  }

  /** Send one message: maybe lost, maybe duplicated, each copy delayed independently. */
  send(msg: Message): void {
    assert.notEqual(msg.from, msg.to, `message to self: ${msg.type} ${msg.from}`);
    this.stats.sent++;
    if (this.isBlocked(msg.from, msg.to) || this.#lost()) {
      this.stats.dropped++;
      return;
    }
    this.#schedule(msg);
    if (this.#random.chance(this.#profile.duplicateProbability)) {
      this.stats.duplicated++;
      this.#schedule(msg);
    }
  }

  /** True when messages from `from` to `to` are currently cut. */
  isBlocked(from: NodeId, to: NodeId): boolean {
    return this.#blocked.size > 0 && this.#blocked.has(`${from}→${to}`);
  }

  /** Cut messages from `from` to `to` (one direction only). */
  blockLink(from: NodeId, to: NodeId): void {
    this.#blocked.add(`${from}→${to}`);
  }

  /** Cut both directions between every member of `a` and every member of `b` (symmetric partition). */
  partition(a: readonly NodeId[], b: readonly NodeId[]): void {
    for (const x of a) {
      for (const y of b) {
        this.blockLink(x, y);
        this.blockLink(y, x);
      }
    }
  }

  /** Cut messages from every member of `from` to every member of `to` (one-way partition). */
  partitionOneWay(from: readonly NodeId[], to: readonly NodeId[]): void {
    for (const x of from) for (const y of to) if (x !== y) this.blockLink(x, y);
  }

  /** Lose each message with probability `lossProbability` until sim time `untilMs`. */
  lossBurst(lossProbability: number, untilMs: number): void {
    assert.ok(lossProbability >= 0 && lossProbability <= 1, 'lossBurst probability out of [0, 1]');
    this.#burstLossProbability = lossProbability;
    this.#burstUntilMs = untilMs;
  }

  /** Remove every partition and loss burst. */
  healAll(): void {
    this.#blocked.clear();
    this.#burstUntilMs = 0;
  }

  /** Remove partitions only (loss bursts continue). */
  healPartitions(): void {
    this.#blocked.clear();
  }

  /** Human-readable list of blocked links (for reports). */
  describePartitions(): string {
    return [...this.#blocked].sort().join(' ');
  }

  #lost(): boolean {
    if (this.#queue.nowMs < this.#burstUntilMs && this.#random.chance(this.#burstLossProbability))
      return true;
    return this.#random.chance(this.#profile.lossProbability);
  }

  #latencyMs(): number {
    const p = this.#profile;
    if (this.#random.chance(p.slowProbability))
      return this.#random.between(p.latencyMsMax, p.slowLatencyMsMax);
    return this.#random.between(p.latencyMsMin, p.latencyMsMax);
  }

  #schedule(msg: Message): void {
    this.#queue.after(this.#latencyMs(), () => {
      if (this.isBlocked(msg.from, msg.to)) {
        this.stats.dropped++;
        return;
      }
      this.stats.delivered++;
      this.#deliver(msg);
    });
  }
}
