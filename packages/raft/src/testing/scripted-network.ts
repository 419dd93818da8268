/**
 * ScriptedNetwork: a hand-driven harness of N RaftCores for scripted scenario tests (in the spirit of
 * etcd-io/raft's interaction tests). Nothing happens unless the test says so: `tick`, `process`
 * (run the Ready cycle: persist → queue messages → apply → advance), `deliver`, `stabilize`.
 *
 * Each node has an in-memory "disk" (hard state, snapshot, entries) written exactly as the Ready
 * contract says, so `crash` + `restart` recover a node from what it persisted. Every core's
 * checkInvariants() runs after every input. Deterministic: seeded Random, manual clocks.
 */
import assert from 'node:assert/strict';
import type { MembershipChange, MembershipChangeResult } from '../core/membership.js';
import { RaftCore } from '../core/raft-core.js';
import type {
  Clock,
  CoreConfig,
  CoreInitialState,
  CoreWarning,
  Entry,
  HardState,
  LogIndex,
  Message,
  NodeId,
  Random,
  ReadFailure,
  ReadState,
  SnapshotMeta,
  Term,
} from '../core/types.js';
import { asIndex, asTerm } from '../core/types.js';
import { SeededRandom } from '../random.js';

/** Manual monotonic clock: advanced by the harness (tickMs per tick) or by the test. */
export class ManualClock implements Clock {
  constructor(public nowMsValue = 0) {}
  nowMs(): number {
    return this.nowMsValue;
  }
  advance(ms: number): void {
    assert.ok(ms >= 0, 'clocks are monotonic');
    this.nowMsValue += ms;
  }
}

/** One node's simulated durable storage, written only from Ready (persist step). */
export interface ScriptedDisk {
  hardState: HardState;
  snapshot: SnapshotMeta | null;
  entries: Entry[];
}

/** Options of a scripted network. Config fields default to small test values. */
export interface ScriptedNetworkOptions {
  readonly config?: Partial<Omit<CoreConfig, 'id' | 'voters'>>;
  /** Per-node config overrides (e.g. one node with an unsafe variant). */
  readonly perNode?: Readonly<Record<NodeId, Partial<Omit<CoreConfig, 'id' | 'voters'>>>>;
  readonly seed?: number;
  /**
   * Bootstrap voters (CoreConfig.voters) of every node; default all `ids`. Ids left out start
   * outside the membership, as a node joining with empty data does (dissertation §4.2.1).
   */
  readonly voters?: readonly NodeId[];
  /** Clock advance per tick, in ms (default 100). */
  readonly tickMs?: number;
  /**
   * Election-timeout draws: 'seeded' uses the package's SeededRandom; a record fixes each node's draw (ticks added
   * to electionTimeoutTicks). Default: node i of n always draws ⌊i × electionTimeoutTicks / n⌋, so in
   * lockstep ticking n1 times out first, then n2, … (deterministic, scriptable elections).
   */
  readonly draws?: 'seeded' | Readonly<Record<NodeId, number>>;
}

/** A Random that always returns the same draw (clamped below n). */
export class FixedRandom implements Random {
  constructor(readonly draw: number) {}
  intBelow(n: number): number {
    return Math.min(this.draw, n - 1);
  }
}

/** Default test configuration: election timeout 10 ticks, heartbeat 1 tick, pre-vote and check-quorum off. */
export const scriptedDefaults: Omit<CoreConfig, 'id' | 'voters'> = {
  electionTimeoutTicks: 10,
  heartbeatTicks: 1,
  preVote: false,
  checkQuorum: false,
  entriesPerMessageMax: 64,
  bytesPerMessageMax: 1 << 20,
  inflightMessagesMax: 4,
};

/** N cores on a hand-driven network with per-node disks (see the file comment). */
export class ScriptedNetwork {
  readonly ids: readonly NodeId[];
  readonly cores = new Map<NodeId, RaftCore>();
  readonly disks = new Map<NodeId, ScriptedDisk>();
  readonly clocks = new Map<NodeId, ManualClock>();
  /** Entries each node applied, in order (across restarts: cleared and re-applied from commit). */
  readonly applied = new Map<NodeId, Entry[]>();
  readonly readStates = new Map<NodeId, ReadState[]>();
  readonly readFailures = new Map<NodeId, ReadFailure[]>();
  /** Every Ready.warnings item, with the node that emitted it, in order. */
  readonly warnings: { readonly node: NodeId; readonly warning: CoreWarning }[] = [];
  /** Messages sent and not yet delivered or dropped, in send order. */
  queue: Message[] = [];
  /** Directed links that drop messages: `${from}->${to}`. */
  readonly #cut = new Set<string>();
  readonly #down = new Set<NodeId>();
  readonly #options: ScriptedNetworkOptions;
  readonly #tickMs: number;
  #seed: number;

  constructor(ids: readonly NodeId[], options: ScriptedNetworkOptions = {}) {
    this.ids = ids;
    this.#options = options;
    this.#tickMs = options.tickMs ?? 100;
    this.#seed = options.seed ?? 1;
    for (const id of ids) {
      this.disks.set(id, {
        hardState: { term: asTerm(0), votedFor: null, commitIndex: asIndex(0) },
        snapshot: null,
        entries: [],
      });
      this.clocks.set(id, new ManualClock(0));
      this.#start(id);
    }
  }

  /** Full CoreConfig of node `id` (defaults + options). */
  configOf(id: NodeId): CoreConfig {
    return {
      ...scriptedDefaults,
      ...this.#options.config,
      ...this.#options.perNode?.[id],
      id,
      voters: this.#options.voters ?? this.ids,
    };
  }

  core(id: NodeId): RaftCore {
    const core = this.cores.get(id);
    assert.ok(core !== undefined, `node ${id} is down`);
    return core;
  }

  /** Replace a node's disk before (re)starting it, e.g. to begin after a snapshot. */
  setDisk(id: NodeId, disk: ScriptedDisk): void {
    this.disks.set(id, {
      hardState: disk.hardState,
      snapshot: disk.snapshot,
      entries: disk.entries.slice(),
    });
  }

  /** Tick `id` `n` times (advancing its clock tickMs each), processing its Ready after each tick. */
  tick(id: NodeId, n = 1): void {
    for (let i = 0; i < n; i++) {
      this.clocks.get(id)!.advance(this.#tickMs);
      this.core(id).tick();
      this.core(id).checkInvariants();
      this.process(id);
    }
  }

  /** Tick every live node `n` times (in id order), processing Readies; does not deliver. */
  tickAll(n = 1): void {
    for (let i = 0; i < n; i++) for (const id of this.ids) if (!this.#down.has(id)) this.tick(id);
  }

  /** Run the Ready cycle of `id` until it has nothing more: persist, queue messages, apply, advance. */
  process(id: NodeId): void {
    const core = this.cores.get(id);
    if (core === undefined) return;
    for (let rounds = 0; core.hasReady(); rounds++) {
      assert.ok(rounds < 10_000, 'Ready loop does not settle');
      const rd = core.ready();
      const disk = this.disks.get(id)!;
      if (rd.hardState !== null) disk.hardState = rd.hardState;
      if (rd.entries.length > 0) {
        const first = rd.entries[0]!.index;
        const keep = first - ((disk.snapshot?.index ?? 0) + 1);
        assert.ok(keep >= 0 && keep <= disk.entries.length, 'persisted entries stay contiguous');
        disk.entries.length = keep;
        disk.entries.push(...rd.entries);
      }
      for (const msg of rd.messages) if (!this.#dropped(msg)) this.queue.push(msg);
      this.applied.get(id)!.push(...rd.committedEntries);
      this.readStates.get(id)!.push(...rd.readStates);
      this.readFailures.get(id)!.push(...rd.readFailures);
      for (const warning of rd.warnings) this.warnings.push({ node: id, warning });
      core.advance(rd);
      core.checkInvariants();
    }
  }

  /** Process every live node's Ready. */
  processAll(): void {
    for (const id of this.ids) this.process(id);
  }

  /**
   * Deliver the queued messages matching `filter` (default all) once each, in send order, processing
   * each receiver right after; returns how many were delivered. Messages sent meanwhile stay queued.
   */
  deliver(filter: (m: Message) => boolean = () => true): number {
    const batch = this.queue;
    this.queue = [];
    let delivered = 0;
    const keep: Message[] = [];
    for (const msg of batch) {
      if (!filter(msg)) {
        keep.push(msg);
        continue;
      }
      if (this.#dropped(msg)) continue;
      delivered++;
      const core = this.core(msg.to);
      core.step(msg);
      core.checkInvariants();
      this.process(msg.to);
    }
    this.queue = keep.concat(this.queue);
    return delivered;
  }

  /** Drop queued messages matching `filter`; returns how many. */
  drop(filter: (m: Message) => boolean): number {
    const before = this.queue.length;
    this.queue = this.queue.filter((m) => !filter(m));
    return before - this.queue.length;
  }

  /** Process and deliver until no node has output and no message is queued (bounded). */
  stabilize(roundsMax = 1000): void {
    this.processAll();
    for (let rounds = 0; this.queue.length > 0; rounds++) {
      assert.ok(rounds < roundsMax, 'network does not stabilize');
      this.deliver();
      this.processAll();
    }
  }

  /**
   * Tick `id` alone until it starts a campaign (its own randomized timeout); its vote requests stay
   * queued (nothing is delivered). Throws if it did not campaign within 2 × electionTimeoutTicks.
   */
  campaign(id: NodeId): void {
    const core = this.core(id);
    const ticksMax = 2 * this.configOf(id).electionTimeoutTicks + 1;
    const role = core.softState().role;
    for (let i = 0; i < ticksMax && core.softState().role === role; i++) this.tick(id);
    assert.notEqual(core.softState().role, role, `${id} did not campaign`);
  }

  /**
   * Make `id` leader: tick every live node in lockstep (no delivery) until `id` campaigns, then
   * stabilize; throws if another node campaigned first or `id` did not win.
   */
  elect(id: NodeId): void {
    const core = this.core(id);
    const idle = (x: NodeId) => this.core(x).softState().role === 'follower' || x === id;
    for (
      let i = 0;
      i < 4 * this.configOf(id).electionTimeoutTicks && core.softState().role === 'follower';
      i++
    ) {
      for (const x of this.ids) {
        if (this.#down.has(x)) continue;
        const before = this.core(x).softState().role;
        this.tick(x);
        assert.ok(x === id || before !== 'follower' || idle(x), `${x} campaigned before ${id}`);
      }
    }
    this.stabilize();
    assert.equal(this.core(id).softState().role, 'leader', `${id} did not win`);
  }

  /** Propose `text` on `id` and return the result. */
  propose(id: NodeId, text: string): ReturnType<RaftCore['propose']> {
    const result = this.core(id).propose(new TextEncoder().encode(text));
    this.core(id).checkInvariants();
    this.process(id);
    return result;
  }

  /** Cut both directions between `a` and each of `others`. */
  cut(a: NodeId, ...others: NodeId[]): void {
    for (const b of others) {
      this.#cut.add(`${a}->${b}`);
      this.#cut.add(`${b}->${a}`);
    }
  }
  /** Cut every link of `id`. */
  isolate(id: NodeId): void {
    this.cut(id, ...this.ids.filter((x) => x !== id));
  }
  /** Restore every link (does not restart crashed nodes). */
  heal(): void {
    this.#cut.clear();
  }

  /**
   * Stop `id`: its in-memory state is lost, its disk kept. Messages already queued stay on the wire:
   * those to `id` are dropped only if delivered while it is down (so a restarted node may still get
   * messages sent to its previous incarnation, as on a real network).
   */
  crash(id: NodeId): void {
    this.cores.delete(id);
    this.#down.add(id);
  }
  /** Start `id` again from its disk. */
  restart(id: NodeId): void {
    this.#down.delete(id);
    this.#start(id);
  }

  /** Crash `id`, erase its disk (a lost or wiped data directory) and start it again, empty. */
  wipe(id: NodeId): void {
    this.crash(id);
    this.disks.set(id, {
      hardState: { term: asTerm(0), votedFor: null, commitIndex: asIndex(0) },
      snapshot: null,
      entries: [],
    });
    this.restart(id);
  }

  /** Propose a membership change on `id` (dissertation §4.1) and process its Ready. */
  changeMembership(id: NodeId, change: MembershipChange): MembershipChangeResult {
    const result = this.core(id).proposeMembershipChange(change);
    this.core(id).checkInvariants();
    this.process(id);
    return result;
  }

  /** Text of applied command entries of `id`, in order (no-ops left out). */
  appliedTexts(id: NodeId): string[] {
    return this.applied
      .get(id)!
      .filter((e) => e.type === 'command')
      .map((e) => new TextDecoder().decode(e.data));
  }

  /** The current leader by soft state, if exactly one live node thinks it leads at the highest term. */
  leader(): NodeId | null {
    let best: { id: NodeId; term: Term } | null = null;
    for (const [id, core] of this.cores) {
      const ss = core.softState();
      if (ss.role === 'leader' && (best === null || ss.term > best.term))
        best = { id, term: ss.term };
    }
    return best?.id ?? null;
  }

  /** Term of node `id`'s log at `index` as persisted on its disk (undefined if absent). */
  diskTerm(id: NodeId, index: LogIndex): Term | undefined {
    const disk = this.disks.get(id)!;
    return disk.entries[index - (disk.snapshot?.index ?? 0) - 1]?.term;
  }

  #randomFor(id: NodeId): Random {
    const draws = this.#options.draws;
    if (draws === 'seeded') return new SeededRandom(this.#seed++);
    const fixed = draws?.[id];
    if (fixed !== undefined) return new FixedRandom(fixed);
    const base = this.configOf(id).electionTimeoutTicks;
    return new FixedRandom(Math.floor((this.ids.indexOf(id) * base) / this.ids.length));
  }

  #dropped(msg: Message): boolean {
    return this.#down.has(msg.to) || this.#cut.has(`${msg.from}->${msg.to}`);
  }

  #start(id: NodeId): void {
    const disk = this.disks.get(id)!;
    const initial: CoreInitialState = {
      hardState: disk.hardState,
      snapshot: disk.snapshot,
      entries: disk.entries.slice(),
    };
    const core = new RaftCore(
      this.configOf(id),
      initial,
      this.clocks.get(id)!,
      this.#randomFor(id),
    );
    core.checkInvariants();
    this.cores.set(id, core);
    this.applied.set(id, []);
    this.readStates.set(id, []);
    this.readFailures.set(id, []);
  }
}
