/**
 * The seeded fault schedule: partitions (symmetric, one-way, isolate the leader, minority/majority,
 * single links, a bridge node), crashes (between events or inside Ready processing, with restarts
 * after short or long downtime, sometimes with a higher term), loss bursts, clock-rate changes,
 * leadership transfers, process pauses, fsync stalls and whole-cluster power losses.
 *
 * Every choice comes from the fault stream of the run's seed, so the schedule replays exactly.
 */
import type { NodeId } from '../core/types.js';
import type { EventQueue } from './event-queue.js';
import type { SimRandom } from './prng.js';
import { DRIFT_RATIO_MAX } from './sim-clock.js';
import type { SimNetwork } from './sim-network.js';
import type { CrashPoint, SimNode } from './sim-node.js';

/** Knobs of the fault schedule (times in ms of sim time, weights relative). */
export interface FaultProfile {
  /** Gap between two faults, uniform in [gapMsMin, gapMsMax]. */
  readonly gapMsMin: number;
  readonly gapMsMax: number;
  readonly partitionWeight: number;
  readonly crashWeight: number;
  readonly lossBurstWeight: number;
  readonly clockDriftWeight: number;
  readonly transferWeight: number;
  readonly healWeight: number;
  /** Process pause (GC, SIGSTOP) of one node, the leader half of the time, for [100, pauseMsMax] ms. */
  readonly pauseWeight: number;
  readonly pauseMsMax: number;
  /** fsync stall of one node for [100, pauseMsMax] ms (its Readies wait; inputs keep arriving). */
  readonly diskStallWeight: number;
  /** Power loss: every node crashes at once and restarts within [5, 300] ms (fresh timers everywhere). */
  readonly powerLossWeight: number;
  /** Crash points drawn uniformly for a single-node crash ('now' = between events). */
  readonly crashPoints: readonly (CrashPoint | 'now')[];
  /** A partition lasts uniform [partitionMsMin, partitionMsMax] unless replaced earlier. */
  readonly partitionMsMin: number;
  readonly partitionMsMax: number;
  /** Probability that a crash targets the current leader (else a random node). */
  readonly crashLeaderProbability: number;
  /** Probability that a restart comes quickly, within [5, 100] ms (else [100, downMsMax]). */
  readonly quickRestartProbability: number;
  readonly downMsMax: number;
  /** Probability that a restarted node comes back with its term raised by 1–3 and no vote. */
  readonly termBumpProbability: number;
  /**
   * Membership change (dissertation ch. 4) asked of the leader: add a learner, promote, remove (the
   * leader itself too), or wipe a learner's data in place. 0 unless the run has spare nodes.
   */
  readonly membershipWeight: number;
  /**
   * Membership runs: probability that a leader just elected is asked for a change at once, before
   * its term's first entry commits (the window of the §4.1 single-server bug).
   */
  readonly changeAtElectionProbability: number;
  /**
   * Probability that a leader that has just accepted a membership change is cut off from every other
   * node at once (for a partition's duration), so the change stays uncommitted in its log alone.
   */
  readonly isolateAfterChangeProbability: number;
  /**
   * Weight, beside add / promote / remove / wipe, of removing a voter that is down (an operator
   * replacing a dead node: remove it first, sim-membership.ts).
   */
  readonly removeDownVoterWeight: number;
}

/** The default schedule: a fault every 50 ms – 1.5 s, a mix weighted towards partitions and crashes. */
export const DEFAULT_FAULTS: FaultProfile = {
  gapMsMin: 50,
  gapMsMax: 1500,
  partitionWeight: 30,
  crashWeight: 30,
  lossBurstWeight: 10,
  clockDriftWeight: 8,
  transferWeight: 7,
  healWeight: 15,
  powerLossWeight: 3,
  pauseWeight: 6,
  pauseMsMax: 3000,
  diskStallWeight: 4,
  crashPoints: [
    'now',
    'now',
    'beforeFsync',
    'afterFsync',
    'afterSend',
    'afterVoteGranted',
    'afterCommitAdvance',
    'afterElected',
    'afterEarlySend',
  ],
  partitionMsMin: 200,
  partitionMsMax: 5000,
  crashLeaderProbability: 0.5,
  quickRestartProbability: 0.35,
  downMsMax: 3000,
  termBumpProbability: 0.1,
  membershipWeight: 0,
  changeAtElectionProbability: 0.3,
  isolateAfterChangeProbability: 0,
  removeDownVoterWeight: 0,
};

/** Counters for reports. */
export interface FaultStats {
  partitions: number;
  crashes: number;
  lossBursts: number;
  clockChanges: number;
  transfers: number;
  heals: number;
  powerLosses: number;
  pauses: number;
  diskStalls: number;
  membershipChanges: number;
}

/** What the schedule may do to nodes (implemented by the simulation). */
export interface FaultTargets {
  readonly nodes: readonly SimNode[];
  readonly network: SimNetwork;
  /** The node that currently believes it leads with the highest term, if any is up. */
  leader(): SimNode | null;
  /** Crash `node` now or at its next Ready (`point`), restarting it after `downMs` with `termBump`. */
  crash(node: SimNode, point: CrashPoint | 'now', downMs: number, termBump: number): void;
  /** Ask for one random membership change (or learner wipe), drawing from `random`. */
  membershipChange(random: SimRandom): void;
  /** Record a line in the run's trace (no-op unless tracing). */
  note(line: string): void;
}

/** Drives faults until `stop()`. */
export class SimFaults {
  readonly #queue: EventQueue;
  readonly #random: SimRandom;
  readonly #targets: FaultTargets;
  readonly #profile: FaultProfile;
  #stopped = false;
  #partitionGeneration = 0;
  readonly stats: FaultStats = {
    partitions: 0,
    crashes: 0,
    lossBursts: 0,
    clockChanges: 0,
    transfers: 0,
    heals: 0,
    powerLosses: 0,
    pauses: 0,
    diskStalls: 0,
    membershipChanges: 0,
  };

  constructor(queue: EventQueue, random: SimRandom, targets: FaultTargets, profile: FaultProfile) {
    this.#queue = queue;
    this.#random = random;
    this.#targets = targets;
    this.#profile = profile;
  }

  /** Begin injecting faults. */
  start(): void {
    this.#scheduleNext();
  }

  /** Inject no more faults (already scheduled heals and restarts still happen). */
  stop(): void {
    this.#stopped = true;
  }

  #scheduleNext(): void {
    const p = this.#profile;
    this.#queue.after(this.#random.between(p.gapMsMin, p.gapMsMax), () => {
      if (this.#stopped) return;
      this.#injectOne();
      this.#scheduleNext();
    });
  }

  #injectOne(): void {
    const p = this.#profile;
    const kinds: ReadonlyArray<readonly [number, () => void]> = [
      [p.partitionWeight, () => this.#partition()],
      [p.crashWeight, () => this.#crash()],
      [p.lossBurstWeight, () => this.#lossBurst()],
      [p.clockDriftWeight, () => this.#clockDrift()],
      [p.transferWeight, () => this.#transfer()],
      [p.healWeight, () => this.#heal()],
      [p.powerLossWeight, () => this.#powerLoss()],
      [p.pauseWeight, () => this.#pause()],
      [p.diskStallWeight, () => this.#diskStall()],
      [
        p.membershipWeight,
        () => {
          this.stats.membershipChanges++;
          this.#targets.membershipChange(this.#random);
        },
      ],
    ];
    const total = kinds.reduce((sum, [w]) => sum + w, 0);
    let roll = this.#random.between(0, total);
    for (const [weight, inject] of kinds) {
      if (roll < weight) {
        inject();
        return;
      }
      roll -= weight;
    }
  }

  #ids(): NodeId[] {
    return this.#targets.nodes.map((n) => n.id);
  }

  #leaderOrRandom(): SimNode {
    const leader = this.#targets.leader();
    return leader !== null && this.#random.chance(0.5)
      ? leader
      : this.#random.pick(this.#targets.nodes);
  }

  /**
   * Cut `node` off from every other node for a partition's duration (replacing any partition), as
   * the partition fault's "isolate one node" does.
   */
  isolate(node: SimNode): void {
    const net = this.#targets.network;
    net.healPartitions();
    this.stats.partitions++;
    net.partition(
      [node.id],
      this.#ids().filter((id) => id !== node.id),
    );
    this.#healPartitionLater();
  }

  #partition(): void {
    const net = this.#targets.network;
    const ids = this.#ids();
    net.healPartitions();
    this.stats.partitions++;
    const kind = this.#random.intBelow(6);
    const victim = this.#leaderOrRandom().id;
    const others = ids.filter((id) => id !== victim);
    switch (kind) {
      case 0: // isolate one node (the leader half of the time), both directions
        net.partition([victim], others);
        break;
      case 1: {
        // minority / majority split
        const shuffled = this.#random.shuffled(ids);
        const minoritySize = this.#random.intBetween(1, Math.floor((ids.length - 1) / 2));
        net.partition(shuffled.slice(0, minoritySize), shuffled.slice(minoritySize));
        break;
      }
      case 2: // one-way: the victim cannot receive
        net.partitionOneWay(others, [victim]);
        break;
      case 3: // one-way: the victim cannot send
        net.partitionOneWay([victim], others);
        break;
      case 4: {
        // one link cut (non-transitive connectivity)
        const other = this.#random.pick(others);
        net.partition([victim], [other]);
        break;
      }
      default: {
        // a bridge: two groups that only a middle node connects
        const shuffled = this.#random.shuffled(ids);
        const half = Math.floor((ids.length - 1) / 2);
        net.partition(shuffled.slice(0, half), shuffled.slice(half + 1));
        break;
      }
    }
    this.#healPartitionLater();
  }

  /** Heal the partitions just made after a drawn duration, unless another replaced them first. */
  #healPartitionLater(): void {
    const net = this.#targets.network;
    const generation = ++this.#partitionGeneration;
    const p = this.#profile;
    const durationMs = this.#random.between(p.partitionMsMin, p.partitionMsMax);
    this.#targets.note(`partition for ${durationMs.toFixed(0)}ms: ${net.describePartitions()}`);
    this.#queue.after(durationMs, () => {
      if (generation === this.#partitionGeneration) {
        net.healPartitions();
        this.#targets.note('partition healed');
      }
    });
  }

  #crash(): void {
    const p = this.#profile;
    const leader = this.#targets.leader();
    const up = this.#targets.nodes.filter((n) => n.up);
    if (up.length === 0) return;
    const node =
      leader !== null && this.#random.chance(p.crashLeaderProbability)
        ? leader
        : this.#random.pick(up);
    const point = this.#random.pick(p.crashPoints);
    const downMs = this.#random.chance(p.quickRestartProbability)
      ? this.#random.between(5, 100)
      : this.#random.between(100, p.downMsMax);
    const termBump = this.#random.chance(p.termBumpProbability) ? this.#random.intBetween(1, 3) : 0;
    this.stats.crashes++;
    this.#targets.note(
      `crash ${node.id} at ${point}, down ${downMs.toFixed(0)}ms, term bump ${termBump}`,
    );
    this.#targets.crash(node, point, downMs, termBump);
  }

  #pause(): void {
    const node = this.#leaderOrRandom();
    const durationMs = this.#random.between(100, this.#profile.pauseMsMax);
    this.stats.pauses++;
    this.#targets.note(`pause ${node.id} for ${durationMs.toFixed(0)}ms`);
    node.pause(this.#queue.nowMs + durationMs);
  }

  #diskStall(): void {
    const node = this.#leaderOrRandom();
    const durationMs = this.#random.between(100, this.#profile.pauseMsMax);
    this.stats.diskStalls++;
    this.#targets.note(`disk stall ${node.id} for ${durationMs.toFixed(0)}ms`);
    node.stallDisk(this.#queue.nowMs + durationMs);
  }

  #powerLoss(): void {
    this.stats.powerLosses++;
    this.#targets.note('power loss: every node crashes');
    for (const node of this.#targets.nodes) {
      if (node.up) this.#targets.crash(node, 'now', this.#random.between(5, 300), 0);
    }
  }

  #lossBurst(): void {
    this.stats.lossBursts++;
    const untilMs = this.#queue.nowMs + this.#random.between(100, 1500);
    const lossProbability = this.#random.between(0.3, 1);
    this.#targets.note(`loss burst p=${lossProbability.toFixed(2)} until ${untilMs.toFixed(0)}ms`);
    this.#targets.network.lossBurst(lossProbability, untilMs);
  }

  #clockDrift(): void {
    this.stats.clockChanges++;
    const node = this.#random.pick(this.#targets.nodes);
    const rate = this.#random.between(1 - DRIFT_RATIO_MAX, 1 + DRIFT_RATIO_MAX);
    this.#targets.note(`clock ${node.id} rate ${rate.toFixed(4)}`);
    node.clock.setRate(rate);
  }

  #transfer(): void {
    const leader = this.#targets.leader();
    if (leader === null) return;
    this.stats.transfers++;
    const to = this.#random.pick(this.#targets.nodes.filter((n) => n !== leader));
    this.#targets.note(`transfer leadership ${leader.id} → ${to.id}`);
    leader.transferLeadership(to.id);
  }

  #heal(): void {
    this.stats.heals++;
    this.#partitionGeneration++;
    this.#targets.note('heal all partitions and loss');
    this.#targets.network.healAll();
  }
}
