/**
 * The seeded deterministic simulation of a Raft cluster (TigerBeetle-style): N RaftCores with drifting
 * clocks, simulated storage with fsync points (a synchronous disk, or a slow one during whose fsync
 * inputs keep reaching the core), a lossy reordering network, clients and a fault schedule, all
 * driven by one discrete-event queue in simulated milliseconds. Every run is a pure
 * function of its options: a failing seed replays exactly with `npm run sim -- --seed S ...`.
 *
 * Modes:
 * - `safety`: faults for the whole run; the checkers (checkers.ts) run after every event.
 * - `liveness`: a fault phase, then everything heals (partitions, loss, pauses and disk stalls end,
 *   crashed nodes restart,
 *   some with a higher term, and 30 % of runs restart one more node with a higher term);
 *   a leader must then be established within LIVENESS_LEADER_BOUND_MS and a write proposed after
 *   the heal must be acknowledged within LIVENESS_COMMIT_BOUND_MS. Safety checkers stay on.
 * - `membership` (either mode): two spare nodes and membership changes as faults (sim-membership.ts);
 *   the checkers count majorities per membership (checkers.ts), and liveness runs also require every
 *   member to catch up within LIVENESS_CATCH_UP_BOUND_MS.
 */
import assert from 'node:assert/strict';
import type {
  CoreConfig,
  Entry,
  Message,
  NodeId,
  ReadFailure,
  SoftState,
  UnsafeVariants,
} from '../core/types.js';
import { SafetyChecker, SimViolation } from './checkers.js';
import { simulatedCommitNoticeDelayTicks } from '../core/config.js';
import type { ViolationKind } from './checkers.js';
import { EventQueue } from './event-queue.js';
import { SimRandom } from './prng.js';
import { SimClients } from './sim-clients.js';
import type { ClientProfile, ClientStats } from './sim-clients.js';
import { DRIFT_RATIO_MAX, SimClock } from './sim-clock.js';
import { DEFAULT_FAULTS, SimFaults } from './sim-faults.js';
import type { FaultProfile, FaultStats, FaultTargets } from './sim-faults.js';
import { SimNetwork } from './sim-network.js';
import type { NetworkProfile, NetworkStats } from './sim-network.js';
import { SimNode } from './sim-node.js';
import { injectMembershipFault } from './sim-membership.js';
import type { ConfigurationState } from '../core/membership.js';
import type { SimStorage } from './sim-storage.js';
import type { CrashPoint, SimNodeHost } from './sim-node.js';

export type SimMode = 'safety' | 'liveness';

/** Length of one core tick on a node's own clock, as in production. */
export const TICK_MS = 10;
/** 10 ticks = 100 ms heartbeats; 100 ticks = 1 s base election timeout (each drawn in [1 s, 2 s)). */
export const HEARTBEAT_TICKS = 10;
export const ELECTION_TIMEOUT_TICKS = 100;

/**
 * Liveness bounds after the heal, in sim ms. The healed network loses nothing and delivers within
 * 50 ms. Why these values (electionTimeout base 1 s, so each timeout is in [1 s, 2 s) of local time,
 * ≤ 2.02 s real with 1 % drift):
 * - after the heal no message from a dead or deposed leader resets a timer, so some node starts a
 *   (pre-)vote by heal + 2.02 s;
 * - it may be refused because voters still honour a leader lease (check-quorum: heard a leader in the
 *   last 1 s) or because a higher-term node makes it step down and retry: one more timeout, 2.02 s;
 * - add ~1 s for a split vote or a late stale leader stepping down.
 * So 5 s for an established leader (a majority following one leader in its term). A write then needs
 * the leader's no-op and the write to commit (a few round trips of ≤ 50 ms), plus the client's retry
 * if its first pick was stale: 6 s. The bounds are not a proof (randomized elections have no hard
 * bound) but a margin over what was measured: over 5,000 3-node and 2,000 5-node seeds the slowest
 * heal → leader was 3.5 s and heal → commit 3.5 s (medians ≈ 0.1 s and 0.5 s; 99th pct ≈ 2.6 s).
 */
export const LIVENESS_LEADER_BOUND_MS = 5_000;
export const LIVENESS_COMMIT_BOUND_MS = 6_000;
/**
 * Membership liveness runs: every running member of the leader's membership must hold the leader's
 * commit index of LIVENESS_COMMIT_BOUND_MS after the heal within this long after that (the healed
 * network delivers within 50 ms; a probe round trip per rejected index at worst). A wiped learner the
 * leader never re-probes (the matchIndex clamp) stays behind for ever.
 */
export const LIVENESS_CATCH_UP_BOUND_MS = 3_000;

/** Options of one run. Everything not given is drawn from the seed. */
export interface SimOptions {
  readonly seed: number;
  readonly nodes?: 3 | 5;
  readonly mode?: SimMode;
  /**
   * Membership changes as faults (dissertation ch. 4): two spare nodes start outside the membership
   * and the leader is asked at random to add, promote and remove members (itself too) and to wipe
   * learners (sim-membership.ts). Liveness runs also check that every member catches up after the heal.
   */
  readonly membership?: boolean;
  /** Known-bad core behaviours (tests only). */
  readonly unsafe?: UnsafeVariants;
  /**
   * Tell the nodes that a crashed node refused their connections (RaftCore.peerRefused), with a
   * spurious hint now and then; default true. Off, runs replay the schedules from before the hint.
   */
  readonly refusalHints?: boolean;
  /** Overrides of the fault schedule. */
  readonly faults?: Partial<FaultProfile>;
  /** Overrides of the fault-phase network profile (otherwise drawn from the seed). */
  readonly network?: Partial<NetworkProfile>;
  /** Overrides of the core configuration drawn from the seed (timing stays at production values). */
  readonly core?: Partial<
    Pick<
      CoreConfig,
      | 'preVote'
      | 'checkQuorum'
      | 'entriesPerMessageMax'
      | 'bytesPerMessageMax'
      | 'inflightMessagesMax'
    >
  >;
  /** Safety: whole run; liveness: the fault phase. Default 20 s (safety) / 10 s (liveness). */
  readonly faultPhaseMs?: number;
  /** Liveness: how long the healed phase may last at most. Default 8 s. */
  readonly healedPhaseMsMax?: number;
  /** Disk latency: 0 = synchronous fsync; else each fsync takes uniform [0, fsyncMsMax] ms. Drawn if absent. */
  readonly fsyncMsMax?: number;
  /** Receives a human-readable line per notable event (role changes, faults, crashes, restarts). */
  readonly trace?: (line: string) => void;
}

/** Counters of one run, for reports and tuning. */
export interface SimStats {
  readonly simMs: number;
  readonly events: number;
  readonly leaderTerms: number;
  readonly committed: number;
  readonly readsChecked: number;
  readonly network: NetworkStats;
  readonly clients: ClientStats;
  readonly faults: FaultStats;
  /** Readies whose messages a leader sent before its fsync (Ready.mustPersistBeforeSend false, §10.2.1). */
  readonly earlySends: number;
  /** Crashes that struck after such messages left and before the fsync of their Ready. */
  readonly crashesBetweenSendAndFsync: number;
  /** Liveness: sim ms from the heal to an established leader / first acknowledged post-heal write. */
  readonly leaderAfterHealMs: number | null;
  readonly commitAfterHealMs: number | null;
}

/** Outcome of one run. `replay` is the one command that reproduces it. */
export interface SimResult {
  readonly seed: number;
  readonly mode: SimMode;
  readonly nodes: 3 | 5;
  readonly ok: boolean;
  readonly violation: {
    readonly kind: ViolationKind;
    readonly message: string;
    readonly atMs: number;
  } | null;
  readonly replay: string;
  readonly stats: SimStats;
}

/** Probability that a node with an open link to a crashed one is told it refused (onCrashed). */
const REFUSAL_HINT_PROBABILITY = 0.8;
/** Probability, per crash, of a spurious refusal hint about the live leader to one follower. */
const SPURIOUS_HINT_PROBABILITY = 0.2;

/** An armed crash that found no qualifying Ready within this long strikes between events (sim ms). */
export const ARMED_CRASH_WAIT_MS_MAX = 2_000;

/** Upper bound on events in one run (a run above it has a runaway loop). */
export const EVENTS_PER_RUN_MAX = 5_000_000;

/** The command that replays a run (SPEC: a failing run prints its seed and how to replay it). */
export function replayCommand(
  seed: number,
  mode: SimMode,
  nodes: number,
  unsafe?: UnsafeVariants,
  membership = false,
): string {
  const flags = Object.entries(unsafe ?? {})
    .filter(([, on]) => on === true)
    .map(([name]) => ` --unsafe ${name}`)
    .join('');
  const m = membership ? ' --membership' : '';
  return `npm run sim -- --seed ${seed} --mode ${mode} --nodes ${nodes}${m}${flags}`;
}

/** Run one seeded simulation to completion or to its first violation. Deterministic. */
export function runSimulation(options: SimOptions): SimResult {
  return new Simulation(options).run();
}

const CLIENT_PROFILE: ClientProfile = {
  thinkMsMin: 5,
  thinkMsMax: 100,
  readProbability: 0.3,
  opTimeoutMs: 2000,
};
const PROBE_PROFILE: ClientProfile = {
  thinkMsMin: 5,
  thinkMsMax: 20,
  readProbability: 0,
  opTimeoutMs: 500,
};
const CLIENTS = 3;
/** Weight of the membership fault among the others (sim-faults.ts DEFAULT_FAULTS) in membership runs. */
const MEMBERSHIP_FAULT_WEIGHT = 40;

/** The network once healed: no loss, a little duplication and reordering, latency ≤ 50 ms. */
const HEALED_NETWORK: NetworkProfile = {
  latencyMsMin: 1,
  latencyMsMax: 5,
  slowProbability: 0.02,
  slowLatencyMsMax: 50,
  lossProbability: 0,
  duplicateProbability: 0.01,
};

class Simulation implements SimNodeHost, FaultTargets {
  readonly queue = new EventQueue();
  readonly checker: SafetyChecker;
  readonly network: SimNetwork;
  readonly nodes: SimNode[] = [];
  readonly #byId = new Map<NodeId, SimNode>();
  readonly #durableLogs: SimStorage[] = [];
  readonly #nodeRandom = new Map<NodeId, SimRandom>();
  readonly #clients: SimClients;
  readonly #faults: SimFaults;
  readonly #faultProfile: FaultProfile;
  readonly #seed: number;
  readonly #mode: SimMode;
  readonly #nodeCount: 3 | 5;
  readonly #unsafe: UnsafeVariants | undefined;
  readonly #faultPhaseMs: number;
  readonly #healedPhaseMsMax: number;
  readonly #healRandom: SimRandom;
  readonly #trace: ((line: string) => void) | undefined;
  readonly #membership: boolean;
  readonly #membershipRandom: SimRandom;
  /** Draws of the connection-refused hints (onCrashed), a stream of its own; null when off. */
  readonly #refusalRandom: SimRandom | null;
  /** Membership liveness: the leader's commit index sampled after the heal, and whether checked. */
  #catchUpTargetIndex: number | null = null;
  #catchUpChecked = false;
  #healedAtMs: number | null = null;
  #leaderAtMs: number | null = null;
  #commitAtMs: number | null = null;

  constructor(options: SimOptions) {
    this.#seed = options.seed;
    this.#mode = options.mode ?? 'safety';
    this.#nodeCount = options.nodes ?? 3;
    this.#unsafe = options.unsafe;
    this.#faultPhaseMs = options.faultPhaseMs ?? (this.#mode === 'safety' ? 20_000 : 10_000);
    this.#healedPhaseMsMax =
      options.healedPhaseMsMax ?? (options.membership === true ? 10_000 : 8_000);
    this.#trace = options.trace;
    this.#membership = options.membership ?? false;
    assert.ok(this.#nodeCount === 3 || this.#nodeCount === 5, 'nodes must be 3 or 5');

    const master = new SimRandom(options.seed);
    const configRandom = master.fork();
    const netRandom = master.fork();
    const faultRandom = master.fork();
    const clientRandom = master.fork();
    const nodeRandom = master.fork();
    this.#healRandom = master.fork();
    this.#membershipRandom = master.fork();
    const refusalRandom = master.fork();
    this.#refusalRandom = options.refusalHints === false ? null : refusalRandom;

    const ids = Array.from({ length: this.#nodeCount }, (_, i) => `n${i + 1}`);
    const spares = this.#membership ? [`n${this.#nodeCount + 1}`, `n${this.#nodeCount + 2}`] : [];
    this.checker = new SafetyChecker({
      nowMs: () => this.queue.nowMs,
      driftRatioMax: DRIFT_RATIO_MAX,
      clusterTimeSlackMs: 1,
      durableLogs: () => this.#durableLogs,
      ...(this.#membership
        ? {
            membership: {
              durableLogsById: () => new Map(this.nodes.map((n) => [n.id, n.storage])),
              bootstrapVoters: ids,
            },
          }
        : {}),
    });
    const networkProfile = { ...drawNetwork(configRandom), ...options.network };
    this.network = new SimNetwork(this.queue, netRandom, networkProfile, (msg) =>
      this.#deliver(msg),
    );
    const coreBase = {
      ...drawCoreConfig(configRandom, this.#mode, ids, options.unsafe),
      ...options.core,
    };
    // Half the seeds use a synchronous disk, half a slow one (inputs reach the core during the fsync).
    const fsyncMsMax = options.fsyncMsMax ?? configRandom.pick([0, 0, 2, 10]);
    for (const id of [...ids, ...spares]) {
      const random = nodeRandom.fork();
      const clock = new SimClock(
        () => this.queue.nowMs,
        random.between(0, 1e9),
        random.between(1 - DRIFT_RATIO_MAX, 1 + DRIFT_RATIO_MAX),
      );
      // Spare nodes start empty outside the membership, as `--join` does.
      const node = new SimNode(
        this,
        { ...coreBase, id, voters: spares.includes(id) ? [] : ids },
        clock,
        TICK_MS,
        fsyncMsMax,
        random.fork(),
      );
      this.nodes.push(node);
      this.#durableLogs.push(node.storage);
      this.#byId.set(id, node);
      this.#nodeRandom.set(id, random);
    }
    this.#clients = new SimClients(this.queue, clientRandom, this.nodes, this.checker);
    this.#clients.onAck((invokedAtMs, ackedAtMs) => {
      if (
        this.#healedAtMs !== null &&
        invokedAtMs >= this.#healedAtMs &&
        this.#commitAtMs === null
      ) {
        this.#commitAtMs = ackedAtMs;
      }
    });
    this.#faultProfile = {
      ...DEFAULT_FAULTS,
      ...(this.#membership ? { membershipWeight: MEMBERSHIP_FAULT_WEIGHT } : {}),
      ...options.faults,
    };
    this.#faults = new SimFaults(this.queue, faultRandom, this, this.#faultProfile);
  }

  run(): SimResult {
    let violation: SimViolation | null = null;
    try {
      this.#start();
      const endMs =
        this.#mode === 'safety' ? this.#faultPhaseMs : this.#faultPhaseMs + this.#healedPhaseMsMax;
      while (this.queue.runNext(endMs)) {
        assert.ok(this.queue.eventsRun <= EVENTS_PER_RUN_MAX, 'EVENTS_PER_RUN_MAX exceeded');
        if (this.#healedAtMs !== null && this.#livenessDone()) break;
      }
    } catch (err) {
      this.note(`VIOLATION ${(err as Error).message}`);
      violation =
        err instanceof SimViolation
          ? err
          : new SimViolation('core-error', (err as Error).stack ?? String(err), this.queue.nowMs, {
              cause: err,
            });
    }
    return {
      seed: this.#seed,
      mode: this.#mode,
      nodes: this.#nodeCount,
      ok: violation === null,
      violation:
        violation === null
          ? null
          : { kind: violation.kind, message: violation.message, atMs: violation.atMs },
      replay: replayCommand(
        this.#seed,
        this.#mode,
        this.#nodeCount,
        this.#unsafe,
        this.#membership,
      ),
      stats: this.#stats(),
    };
  }

  #start(): void {
    for (const node of this.nodes) node.start(this.#nodeRandom.get(node.id)!.fork());
    for (let i = 0; i < CLIENTS; i++) this.#clients.add(CLIENT_PROFILE, i * 7);
    this.#faults.start();
    if (this.#mode === 'liveness') this.queue.at(this.#faultPhaseMs, () => this.#heal());
  }

  // ---- SimNodeHost ----

  send(msg: Message): void {
    this.network.send(msg);
  }

  onApplied(node: SimNode, entry: Entry): void {
    this.#clients.onApplied(node, entry);
  }

  onReadServed(node: SimNode, requestId: number, observedIndex: number): void {
    this.#clients.onReadServed(node, requestId, observedIndex);
  }

  onReadFailed(node: SimNode, failure: ReadFailure): void {
    this.#clients.onReadFailed(node, failure);
  }

  onCrashed(node: SimNode): void {
    this.note(`${node.id} crashed`);
    this.#clients.onCrashed(node);
    this.#hintRefusals(node);
  }

  /**
   * A crashed process refuses connections: each node with a link to it that is not cut (a cut link
   * times out instead) learns so within [1, 30] ms, with probability 0.8 (its link may be idle or
   * backing off). One time in five a follower also gets a spurious hint about the current leader,
   * which must cost at most an extra election (RaftCore.peerRefused).
   */
  #hintRefusals(crashed: SimNode): void {
    const random = this.#refusalRandom;
    if (random === null) return;
    for (const other of this.nodes) {
      if (other === crashed || this.network.isBlocked(other.id, crashed.id)) continue;
      if (!random.chance(REFUSAL_HINT_PROBABILITY)) continue;
      this.queue.after(random.between(1, 30), () => other.peerRefused(crashed.id));
    }
    const leader = this.leader();
    if (leader === null || !random.chance(SPURIOUS_HINT_PROBABILITY)) return;
    const follower = random.pick(this.nodes.filter((n) => n !== leader && n !== crashed));
    this.queue.after(random.between(1, 30), () => follower.peerRefused(leader.id));
  }

  onSoftState(node: SimNode, ss: SoftState): void {
    if (
      this.#membership &&
      this.#healedAtMs === null &&
      ss.role === 'leader' &&
      this.#membershipRandom.chance(this.#faultProfile.changeAtElectionProbability)
    ) {
      // Operators retry on the new leader at once: a change before its first commit (§4.1).
      this.queue.after(0, () => this.membershipChange(this.#membershipRandom));
    }
    this.note(
      `${node.id} ${ss.role} term ${ss.term} leader ${ss.leaderId ?? '-'} (last index ${node.storage.lastIndex})`,
    );
  }

  onConfiguration(node: SimNode, cs: ConfigurationState): void {
    this.checker.observeConfig(cs.configIndex, cs.membership.voters);
    const { voters, learners } = cs.membership;
    this.note(
      `${node.id} membership @${cs.configIndex}${cs.committed ? ' committed' : ''}: voters ${voters.join(',')} learners ${learners.join(',') || '-'}`,
    );
  }

  membershipChange(random: SimRandom): void {
    injectMembershipFault(this, random, this.#faultProfile);
  }

  isolate(node: SimNode): void {
    this.#faults.isolate(node);
  }

  note(line: string): void {
    this.#trace?.(`${this.queue.nowMs.toFixed(1).padStart(9)}ms ${line}`);
  }

  // ---- FaultTargets ----

  leader(): SimNode | null {
    let best: SimNode | null = null;
    let bestTerm = -1;
    for (const node of this.nodes) {
      const ss = node.softState();
      if (ss !== null && ss.role === 'leader' && ss.term > bestTerm) {
        best = node;
        bestTerm = ss.term;
      }
    }
    return best;
  }

  crash(node: SimNode, point: CrashPoint | 'now', downMs: number, termBump: number): void {
    const restartAfterCrash = (): void => {
      const inc = node.incarnation;
      this.queue.after(downMs, () => {
        if (!node.up && node.incarnation === inc) {
          this.note(`${node.id} restarts (term bump ${termBump})`);
          node.start(this.#nodeRandom.get(node.id)!.fork(), termBump);
        }
      });
    };
    if (point === 'now') {
      if (!node.up) return;
      node.crash();
      restartAfterCrash();
      return;
    }
    // Armed: strikes inside a later Ready; if none qualifies within ARMED_CRASH_WAIT_MS_MAX, crash between events.
    node.pendingCrash = point;
    const inc = node.incarnation;
    const poll = (): void => {
      if (node.incarnation !== inc) {
        restartAfterCrash();
        return;
      }
      if (this.#healedAtMs !== null) {
        node.pendingCrash = null;
        return;
      }
      if (this.queue.nowMs >= armedAtMs + ARMED_CRASH_WAIT_MS_MAX) {
        node.crash();
        restartAfterCrash();
        return;
      }
      this.queue.after(TICK_MS, poll);
    };
    const armedAtMs = this.queue.nowMs;
    this.queue.after(0, poll);
  }

  // ---- internals ----

  #deliver(msg: Message): void {
    const node = this.#byId.get(msg.to);
    assert.ok(node !== undefined, `message to unknown node ${msg.to}`);
    node.deliver(msg);
  }

  #heal(): void {
    this.#healedAtMs = this.queue.nowMs;
    this.note(
      'heal: faults stop; partitions, loss, pauses and disk stalls end; crashed nodes restart',
    );
    this.#faults.stop();
    this.network.healAll();
    this.network.setProfile(HEALED_NETWORK);
    const random = this.#healRandom;
    for (const node of this.nodes) {
      node.pendingCrash = null;
      node.endStalls();
      if (!node.up)
        node.start(
          this.#nodeRandom.get(node.id)!.fork(),
          random.chance(0.3) ? random.intBetween(1, 3) : 0,
        );
    }
    if (random.chance(0.3)) {
      // A node rejoins with a higher term (and no vote): it must not keep the cluster leaderless.
      const node = random.pick(this.nodes);
      node.crash();
      node.start(this.#nodeRandom.get(node.id)!.fork(), random.intBetween(1, 3));
    }
    this.#clients.add(PROBE_PROFILE, 0);
    const healedAt = this.#healedAtMs;
    this.queue.at(healedAt + LIVENESS_LEADER_BOUND_MS, () => {
      if (this.#leaderAtMs === null) {
        throw new SimViolation(
          'liveness',
          `no established leader ${LIVENESS_LEADER_BOUND_MS}ms after heal at ${healedAt}ms${this.#describeRoles()}`,
          this.queue.nowMs,
        );
      }
    });
    if (this.#membership) this.#scheduleCatchUpCheck(healedAt);
    this.queue.at(healedAt + LIVENESS_COMMIT_BOUND_MS, () => {
      if (this.#commitAtMs === null) {
        throw new SimViolation(
          'liveness',
          `no write committed ${LIVENESS_COMMIT_BOUND_MS}ms after heal at ${healedAt}ms${this.#describeRoles()}`,
          this.queue.nowMs,
        );
      }
    });
  }

  /** Membership liveness (LIVENESS_CATCH_UP_BOUND_MS): every running member catches up. */
  #scheduleCatchUpCheck(healedAt: number): void {
    this.queue.at(healedAt + LIVENESS_COMMIT_BOUND_MS, () => {
      this.#catchUpTargetIndex = this.leader()?.commitIndex() ?? 0;
    });
    this.queue.at(healedAt + LIVENESS_COMMIT_BOUND_MS + LIVENESS_CATCH_UP_BOUND_MS, () => {
      const target = this.#catchUpTargetIndex ?? 0;
      const membership = this.leader()?.configuration()?.membership;
      for (const node of this.nodes) {
        if (membership === undefined || !node.up) continue;
        if (!membership.voters.includes(node.id) && !membership.learners.includes(node.id))
          continue;
        if (node.lastIndex() < target) {
          throw new SimViolation(
            'liveness',
            `member ${node.id} holds ${node.lastIndex()} entries, ${LIVENESS_CATCH_UP_BOUND_MS}ms after the leader committed ${target}${this.#describeRoles()}`,
            this.queue.nowMs,
          );
        }
      }
      this.#catchUpChecked = true;
    });
  }

  #describeRoles(): string {
    const parts = this.nodes.map((n) => {
      const ss = n.softState();
      return ss === null
        ? `${n.id}:down`
        : `${n.id}:${ss.role}/t${ss.term}/lead=${ss.leaderId ?? '-'}`;
    });
    return ` (${parts.join(' ')})`;
  }

  /** After the heal: record when a leader is established; true once both liveness goals are met. */
  #livenessDone(): boolean {
    if (this.#leaderAtMs === null && this.#establishedLeader()) this.#leaderAtMs = this.queue.nowMs;
    return (
      this.#leaderAtMs !== null &&
      this.#commitAtMs !== null &&
      this.queue.nowMs >= this.#commitAtMs + 500 &&
      (!this.#membership || this.#catchUpChecked)
    );
  }

  /** A leader followed, in its term, by a majority of the cluster (itself included). */
  #establishedLeader(): boolean {
    const leader = this.leader();
    if (leader === null) return false;
    const ls = leader.softState()!;
    const voters = leader.configuration()!.membership.voters;
    let followers = 0;
    for (const node of this.nodes) {
      const ss = node.softState();
      if (!voters.includes(node.id) || ss === null || ss.term !== ls.term) continue;
      if (node === leader || ss.leaderId === leader.id) followers++;
    }
    return followers > voters.length / 2;
  }

  #stats(): SimStats {
    const healed = this.#healedAtMs;
    return {
      simMs: this.queue.nowMs,
      events: this.queue.eventsRun,
      leaderTerms: this.checker.leaderTerms,
      committed: this.checker.committedCount,
      readsChecked: this.checker.readsChecked,
      network: { ...this.network.stats },
      clients: { ...this.#clients.stats },
      faults: { ...this.#faults.stats },
      earlySends: this.nodes.reduce((n, node) => n + node.earlySends, 0),
      crashesBetweenSendAndFsync: this.nodes.reduce(
        (n, node) => n + node.crashesBetweenSendAndFsync,
        0,
      ),
      leaderAfterHealMs:
        healed === null || this.#leaderAtMs === null ? null : this.#leaderAtMs - healed,
      commitAfterHealMs:
        healed === null || this.#commitAtMs === null ? null : this.#commitAtMs - healed,
    };
  }
}

/** A per-seed network profile: latency spread, slow tail (reordering), loss and duplication. */
function drawNetwork(random: SimRandom): NetworkProfile {
  return {
    latencyMsMin: 1,
    latencyMsMax: random.pick([2, 5, 15]),
    slowProbability: random.pick([0, 0.02, 0.1]),
    slowLatencyMsMax: random.pick([50, 300, 1000]),
    lossProbability: random.pick([0, 0.01, 0.05]),
    duplicateProbability: random.pick([0, 0.01, 0.05]),
  };
}

/** A per-seed core configuration (production timing; message limits varied to vary interleavings). */
function drawCoreConfig(
  random: SimRandom,
  mode: SimMode,
  voters: readonly NodeId[],
  unsafe: UnsafeVariants | undefined,
): Omit<CoreConfig, 'id'> {
  const base = {
    voters,
    electionTimeoutTicks: ELECTION_TIMEOUT_TICKS,
    heartbeatTicks: HEARTBEAT_TICKS,
    // Liveness relies on both; safety must hold without them too.
    preVote: mode === 'liveness' || random.chance(0.8),
    checkQuorum: mode === 'liveness' || random.chance(0.8),
    entriesPerMessageMax: random.pick([1, 3, 64]),
    bytesPerMessageMax: random.pick([64, 1 << 20]),
    inflightMessagesMax: random.pick([1, 4, 32]),
  };
  // Held-back commit notices (as the runtime runs them) on about half the seeds, without a draw of
  // its own so that every seed keeps its schedule.
  const withNotices = {
    ...base,
    commitNoticeDelayTicks: base.bytesPerMessageMax === 64 ? 0 : simulatedCommitNoticeDelayTicks,
  };
  return unsafe === undefined ? withNotices : { ...withNotices, unsafe };
}
