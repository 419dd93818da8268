/**
 * Safety checkers for Raft histories, fed by the simulator after every step (usable on any history
 * that reports the same observations, e.g. a real cluster's logs).
 *
 * Properties (Raft paper Figure 3 and §5.4; docs/concepts.md, §1.2, §2):
 * - Election safety: at most one leader per term, ever.
 * - Log matching: two logs with an entry of the same index and term hold the same entry there and
 *   the same prefix before it (checked incrementally: each (index, term) remembers its entry and the
 *   term of the entry before it).
 * - Leader completeness: an entry committed in term t is in the log of every leader of a term > t.
 * - State machine safety: every node applies, and durably commits, the same entry at each index;
 *   each node applies in index order.
 * - Commit index never decreases on a node (in memory within one incarnation; durably across restarts),
 *   and a node never rewrites or drops entries at or below its durable commit index.
 * - A committed entry is already durable on a majority when anyone learns it is committed (docs/concepts.md).
 * - Acknowledged writes are in the log of every later leader; a ReadIndex read observes every write
 *   acknowledged before the read began (linearizable reads, docs/concepts.md).
 * - Cluster time never decreases along the log and never runs ahead of real elapsed time beyond the
 *   drift bound (docs/concepts.md, needed for docs/concepts.md "no early expiry").
 * - Cluster time never advances faster than real time along the committed log: for committed entries
 *   e1 < e2 stamped (by their leaders) at real times r1 ≤ r2, ct(e2) − ct(e1) ≤ (r2 − r1) × (1 + drift)
 *   + slack (docs/concepts.md: a lease renewed in e1 must not expire in e2 before ttlMs of real time). Slower
 *   is fine (the leaderless freeze). Needs observeStamped for every entry a leader creates.
 * Every failure throws SimViolation with a stable `kind`.
 */
import { decodeMembership } from '../core/membership.js';
import type { Entry, LogIndex, NodeId, Role, Term } from '../core/types.js';
import { describeEntry, sameEntry } from './entry-identity.js';

/** Stable names of the properties the simulator checks. */
export type ViolationKind =
  | 'election-safety'
  | 'log-matching'
  | 'leader-completeness'
  | 'state-machine-safety'
  | 'apply-order'
  | 'commit-monotonic'
  | 'committed-entry-rewritten'
  | 'committed-not-durable'
  | 'acked-write-lost'
  | 'stale-read'
  | 'cluster-time'
  | 'ready-contract'
  | 'core-invariant'
  | 'core-error'
  | 'liveness';

/** A broken property: `kind` says which, `atMs` when (sim time), the message what was seen. */
export class SimViolation extends Error {
  readonly kind: ViolationKind;
  readonly atMs: number;
  constructor(kind: ViolationKind, message: string, atMs: number, options?: { cause?: unknown }) {
    super(`[${kind}] t=${atMs.toFixed(1)}ms ${message}`, options);
    this.name = 'SimViolation';
    this.kind = kind;
    this.atMs = atMs;
  }
}

/** Read access to one node's (durable) log; SimStorage satisfies it. */
export interface LogView {
  readonly lastIndex: LogIndex;
  entryAt(index: number): Entry | undefined;
  termAt(index: number): Term | undefined;
}

/** Options of the checker. */
export interface SafetyCheckerOptions {
  /** Simulated real time now, in ms since the cluster started (cluster time 0). */
  readonly nowMs: () => number;
  /** docs/concepts.md maxDriftRatio: cluster time may run ahead of real time by at most this ratio. */
  readonly driftRatioMax: number;
  /** Extra allowance for the cluster-time bound, in ms (clock read granularity). */
  readonly clusterTimeSlackMs: number;
  /**
   * Every voter's durable log, if known: then each newly committed entry must already be durable on a
   * majority (docs/concepts.md "committed = durable on a majority, fsynced"; §1.7).
   */
  readonly durableLogs?: () => readonly LogView[];
  /**
   * With membership changes (dissertation ch. 4): every node's durable log by id and the bootstrap
   * voters. Then "durable on a majority" means a majority of the voters of the membership in effect
   * at the entry in the committed log, or of a membership set by a later `config` entry that some
   * node had in effect (the committing leader's, §4.1). Replaces `durableLogs`.
   */
  readonly membership?: {
    readonly durableLogsById: () => ReadonlyMap<NodeId, LogView>;
    readonly bootstrapVoters: readonly NodeId[];
  };
}

interface CommittedRecord {
  readonly entry: Entry;
  /** A term ≥ the term in which the entry was committed: the applier's term when first applied. */
  readonly commitTermBound: Term;
}

interface AckedWrite {
  readonly entry: Entry;
  /** Term of the proposing leader when it applied the entry (≥ the commit term). */
  readonly ackTerm: Term;
}

/** Entries per (index, term) plus the term before them, for incremental log matching. */
interface MatchRecord {
  readonly entry: Entry;
  readonly prevTerm: Term;
}

/** Cheap enough to run after every event: each method is O(1) or O(entries written), except the
 * leader-completeness check at a new leader, which is O(committed log). */
export class SafetyChecker {
  readonly #opts: SafetyCheckerOptions;
  readonly #leaderOfTerm = new Map<number, NodeId>();
  readonly #currentLeaders = new Map<NodeId, { term: Term; log: LogView }>();
  /** Committed (applied somewhere) entries; `#committed[i - 1]` is index i. */
  readonly #committed: CommittedRecord[] = [];
  readonly #byIndexTerm = new Map<number, MatchRecord>();
  readonly #commitInMemory = new Map<NodeId, number>();
  readonly #commitDurable = new Map<NodeId, number>();
  readonly #acked: AckedWrite[] = [];
  /** Real (sim) time at which each entry was stamped by its leader, by `index * 2^20 + term`. */
  readonly #stampedAtMs = new Map<number, number>();
  /** min over committed entries so far of ct − stampedAt × (1 + drift): the rate property's bound. */
  #rateBoundMs = Infinity;
  #rateBoundEntry = '';
  #maxAckedIndex = 0;
  #readsChecked = 0;
  /** Voters of the membership in effect at the end of the committed log (membership option). */
  #committedVoters: readonly NodeId[];
  /** Every membership some node had in effect: its config index and voters (membership option). */
  readonly #seenConfigs: { readonly index: number; readonly voters: readonly NodeId[] }[] = [];

  constructor(opts: SafetyCheckerOptions) {
    this.#opts = opts;
    this.#committedVoters = opts.membership?.bootstrapVoters ?? [];
  }

  /** A node had the membership with `voters`, set by the config entry at `configIndex`, in effect. */
  observeConfig(configIndex: number, voters: readonly NodeId[]): void {
    if (this.#seenConfigs.some((c) => c.index === configIndex && sameIds(c.voters, voters))) return;
    this.#seenConfigs.push({ index: configIndex, voters });
  }

  /** A node's data was erased (it rejoins empty): its commit watermarks start again from 0. */
  observeWipe(nodeId: NodeId): void {
    this.#currentLeaders.delete(nodeId);
    this.#commitInMemory.delete(nodeId);
    this.#commitDurable.delete(nodeId);
  }

  /** Highest index of an acknowledged write so far (a read invoked now must observe at least it). */
  get maxAckedIndex(): number {
    return this.#maxAckedIndex;
  }

  /** Number of committed indexes seen. */
  get committedCount(): number {
    return this.#committed.length;
  }

  get ackedCount(): number {
    return this.#acked.length;
  }

  get readsChecked(): number {
    return this.#readsChecked;
  }

  /** Number of distinct terms that had a leader. */
  get leaderTerms(): number {
    return this.#leaderOfTerm.size;
  }

  /** Committed entry at `index` (as first applied), if any. */
  committedAt(index: number): Entry | undefined {
    return this.#committed[index - 1]?.entry;
  }

  #fail(kind: ViolationKind, message: string): never {
    throw new SimViolation(kind, message, this.#opts.nowMs());
  }

  /**
   * A node's role/term after a step. Election safety; on becoming leader, leader completeness and
   * acknowledged writes against its log (which must already hold everything the core produced).
   */
  observeRole(nodeId: NodeId, role: Role, term: Term, log: LogView): void {
    if (role !== 'leader') {
      this.#currentLeaders.delete(nodeId);
      return;
    }
    const known = this.#leaderOfTerm.get(term);
    if (known !== undefined && known !== nodeId) {
      this.#fail('election-safety', `two leaders in term ${term}: ${known} and ${nodeId}`);
    }
    const current = this.#currentLeaders.get(nodeId);
    if (current !== undefined && current.term === term) return;
    this.#leaderOfTerm.set(term, nodeId);
    this.#currentLeaders.set(nodeId, { term, log });
    this.#checkLeaderHasCommitted(nodeId, term, log);
  }

  /** A node crashed: it is no longer a current leader. */
  observeCrash(nodeId: NodeId): void {
    this.#currentLeaders.delete(nodeId);
  }

  #checkLeaderHasCommitted(nodeId: NodeId, term: Term, log: LogView): void {
    for (let i = 0; i < this.#committed.length; i++) {
      const rec = this.#committed[i]!;
      if (rec.commitTermBound >= term) continue;
      const mine = log.entryAt(i + 1);
      if (mine === undefined || !sameEntry(mine, rec.entry)) {
        this.#fail(
          'leader-completeness',
          `leader ${nodeId} of term ${term} lacks committed entry ${describeEntry(rec.entry)} ` +
            `(committed by term ≤ ${rec.commitTermBound}); it has ${describeEntry(mine)}`,
        );
      }
    }
    for (const w of this.#acked) {
      if (w.ackTerm >= term) continue;
      const mine = log.entryAt(w.entry.index);
      if (mine === undefined || !sameEntry(mine, w.entry)) {
        this.#fail(
          'acked-write-lost',
          `leader ${nodeId} of term ${term} lacks acknowledged write ${describeEntry(w.entry)} ` +
            `(acked in term ${w.ackTerm}); it has ${describeEntry(mine)}`,
        );
      }
    }
  }

  /**
   * Entries `[firstWritten, log.lastIndex]` of `nodeId` just became durable. Log matching and cluster
   * time order along the log, both O(entries written).
   */
  observePersisted(nodeId: NodeId, log: LogView, firstWritten: LogIndex): void {
    for (let i = firstWritten; i <= log.lastIndex; i++) {
      const e = log.entryAt(i)!;
      const prevTerm = log.termAt(i - 1)!;
      const key = i * 1_048_576 + e.term;
      const rec = this.#byIndexTerm.get(key);
      if (rec === undefined) {
        this.#byIndexTerm.set(key, { entry: e, prevTerm });
      } else if (!sameEntry(rec.entry, e) || rec.prevTerm !== prevTerm) {
        this.#fail(
          'log-matching',
          `${nodeId} holds ${describeEntry(e)} after term ${prevTerm}, but another log holds ` +
            `${describeEntry(rec.entry)} after term ${rec.prevTerm}`,
        );
      }
      const prev = log.entryAt(i - 1);
      if (prev !== undefined && e.clusterTimeMs < prev.clusterTimeMs) {
        this.#fail(
          'cluster-time',
          `${nodeId} log: ${describeEntry(e)} after ${describeEntry(prev)}`,
        );
      }
    }
  }

  /**
   * A write that replaced entries from `firstWritten` on, where the node's durable commit index before
   * the write was `commitBefore` and its terms at [firstWritten, commitBefore] were `termsBefore`.
   * Committed entries must never be replaced or dropped (Raft §5.3: only conflicting, uncommitted
   * entries are deleted).
   */
  observeRewrite(
    nodeId: NodeId,
    log: LogView,
    firstWritten: LogIndex,
    commitBefore: LogIndex,
    termsBefore: readonly Term[],
  ): void {
    if (log.lastIndex < commitBefore) {
      this.#fail(
        'committed-entry-rewritten',
        `${nodeId} truncated its log to ${log.lastIndex} below its durable commitIndex ${commitBefore}`,
      );
    }
    for (let k = 0; k < termsBefore.length; k++) {
      const index = firstWritten + k;
      if (log.termAt(index) !== termsBefore[k]) {
        this.#fail(
          'committed-entry-rewritten',
          `${nodeId} replaced committed index ${index} (term ${termsBefore[k]} → ${log.termAt(index)}); ` +
            `durable commitIndex was ${commitBefore}`,
        );
      }
    }
  }

  /** The in-memory commit index of a running core (never decreases within one incarnation). */
  observeCommitIndex(nodeId: NodeId, commitIndex: LogIndex): void {
    const before = this.#commitInMemory.get(nodeId) ?? 0;
    if (commitIndex < before) {
      this.#fail('commit-monotonic', `${nodeId} commitIndex went from ${before} to ${commitIndex}`);
    }
    this.#commitInMemory.set(nodeId, commitIndex);
  }

  /** A node restarted from durable state: its in-memory commit index restarts from the durable one. */
  observeRestart(nodeId: NodeId, durableCommit: LogIndex): void {
    this.#currentLeaders.delete(nodeId);
    this.#commitInMemory.set(nodeId, durableCommit);
  }

  /**
   * `nodeId` (in term `nodeTerm`) applied `entry` after having applied up to `appliedBefore`.
   * Apply order, then the entry is learned as committed (see #learnCommitted).
   */
  observeApply(nodeId: NodeId, entry: Entry, nodeTerm: Term, appliedBefore: number): void {
    if (entry.index !== appliedBefore + 1) {
      this.#fail('apply-order', `${nodeId} applied ${describeEntry(entry)} after ${appliedBefore}`);
    }
    this.#learnCommitted(nodeId, entry, nodeTerm, 'applied');
  }

  /**
   * `nodeId` (in term `nodeTerm`) made `commitIndex` durable with `log` as its durable log: every entry
   * up to it is committed. The durable commit index never decreases (across restarts too).
   */
  observeDurableCommit(nodeId: NodeId, commitIndex: LogIndex, log: LogView, nodeTerm: Term): void {
    const before = this.#commitDurable.get(nodeId) ?? 0;
    if (commitIndex < before) {
      this.#fail(
        'commit-monotonic',
        `${nodeId} durable commitIndex went from ${before} to ${commitIndex}`,
      );
    }
    this.#commitDurable.set(nodeId, commitIndex);
    const upTo = Math.min(commitIndex, log.lastIndex);
    for (let i = before + 1; i <= upTo; i++)
      this.#learnCommitted(nodeId, log.entryAt(i)!, nodeTerm, 'durably committed');
  }

  /**
   * `entry` is committed per `nodeId`, whose term is `nodeTerm` (≥ the term in which the entry was
   * committed). State machine safety against what other nodes committed or applied; a newly
   * committed index is checked for cluster-time order and against every current leader of a later term.
   */
  #learnCommitted(nodeId: NodeId, entry: Entry, nodeTerm: Term, how: string): void {
    const rec = this.#committed[entry.index - 1];
    if (rec !== undefined) {
      if (!sameEntry(rec.entry, entry)) {
        this.#fail(
          'state-machine-safety',
          `${nodeId} ${how} ${describeEntry(entry)} but index ${entry.index} was committed as ${describeEntry(rec.entry)}`,
        );
      }
      return;
    }
    if (entry.index !== this.#committed.length + 1) {
      this.#fail(
        'apply-order',
        `${describeEntry(entry)} committed before index ${this.#committed.length + 1}`,
      );
    }
    this.#checkClusterTime(entry);
    this.#checkDurableOnMajority(nodeId, entry, how);
    this.#committed.push({ entry, commitTermBound: nodeTerm });
    if (entry.type === 'config') {
      const m = decodeMembership(entry.data);
      if (m !== null) this.#committedVoters = m.voters;
    }
    for (const [leaderId, { term, log }] of this.#currentLeaders) {
      if (term <= nodeTerm) continue;
      const mine = log.entryAt(entry.index);
      if (mine === undefined || !sameEntry(mine, entry)) {
        this.#fail(
          'leader-completeness',
          `entry ${describeEntry(entry)} committed by term ≤ ${nodeTerm} is missing from leader ${leaderId} ` +
            `of term ${term} (has ${describeEntry(mine)})`,
        );
      }
    }
  }

  #checkDurableOnMajority(nodeId: NodeId, entry: Entry, how: string): void {
    if (this.#opts.membership !== undefined) {
      this.#checkDurableOnVoterMajority(
        nodeId,
        entry,
        how,
        this.#opts.membership.durableLogsById(),
      );
      return;
    }
    const logs = this.#opts.durableLogs?.();
    if (logs === undefined) return;
    let holders = 0;
    for (const log of logs) {
      const mine = log.entryAt(entry.index);
      if (mine !== undefined && sameEntry(mine, entry)) holders++;
    }
    if (holders * 2 <= logs.length) {
      this.#fail(
        'committed-not-durable',
        `${nodeId} ${how} ${describeEntry(entry)} but only ${holders} of ${logs.length} durable logs hold it`,
      );
    }
  }

  #checkDurableOnVoterMajority(
    nodeId: NodeId,
    entry: Entry,
    how: string,
    logs: ReadonlyMap<NodeId, LogView>,
  ): void {
    const candidates = [this.#committedVoters];
    for (const c of this.#seenConfigs) if (c.index >= entry.index) candidates.push(c.voters);
    const counts: string[] = [];
    for (const voters of candidates) {
      let holders = 0;
      for (const id of voters) {
        const mine = logs.get(id)?.entryAt(entry.index);
        if (mine !== undefined && sameEntry(mine, entry)) holders++;
      }
      if (holders * 2 > voters.length) return;
      counts.push(`${holders} of [${voters.join(',')}]`);
    }
    this.#fail(
      'committed-not-durable',
      `${nodeId} ${how} ${describeEntry(entry)} but only ${counts.join(' / ')} durable logs hold it`,
    );
  }

  /**
   * The leader of `term` created (and stamped with its cluster time) the entry at `index` at real time
   * `atMs` (sim ms). One leader per term, so (index, term) names one entry; the first report counts.
   */
  observeStamped(index: LogIndex, term: Term, atMs: number): void {
    const key = index * 1_048_576 + term;
    if (!this.#stampedAtMs.has(key)) this.#stampedAtMs.set(key, atMs);
  }

  /** Rate property along the committed log (file comment), O(1) per newly committed entry. */
  #checkClusterTimeRate(entry: Entry): void {
    const key = entry.index * 1_048_576 + entry.term;
    const atMs = this.#stampedAtMs.get(key);
    if (atMs === undefined) return; // stamped by a history that did not report stamps
    this.#stampedAtMs.delete(key);
    const rateFactor = 1 + this.#opts.driftRatioMax;
    const h = entry.clusterTimeMs - atMs * rateFactor;
    if (h > this.#rateBoundMs + this.#opts.clusterTimeSlackMs) {
      this.#fail(
        'cluster-time',
        `committed ${describeEntry(entry)} stamped at real ${atMs.toFixed(1)}ms is ${(h - this.#rateBoundMs).toFixed(1)}ms ` +
          `further from ${this.#rateBoundEntry} in cluster time than real elapsed time × (1 + drift)`,
      );
    }
    if (h < this.#rateBoundMs) {
      this.#rateBoundMs = h;
      this.#rateBoundEntry = `${describeEntry(entry)} (stamped at real ${atMs.toFixed(1)}ms)`;
    }
  }

  #checkClusterTime(entry: Entry): void {
    this.#checkClusterTimeRate(entry);
    const prev = this.#committed[entry.index - 2]?.entry;
    if (prev !== undefined && entry.clusterTimeMs < prev.clusterTimeMs) {
      this.#fail(
        'cluster-time',
        `committed log: ${describeEntry(entry)} after ${describeEntry(prev)}`,
      );
    }
    const boundMs =
      this.#opts.nowMs() * (1 + this.#opts.driftRatioMax) + this.#opts.clusterTimeSlackMs;
    if (entry.clusterTimeMs > boundMs) {
      this.#fail(
        'cluster-time',
        `${describeEntry(entry)} is ahead of real elapsed time ${this.#opts.nowMs().toFixed(1)}ms × (1 + drift)`,
      );
    }
  }

  /** A client write was acknowledged: its entry was applied on the leader it was proposed to. */
  observeWriteAcked(entry: Entry, ackTerm: Term): void {
    this.#acked.push({ entry, ackTerm });
    if (entry.index > this.#maxAckedIndex) this.#maxAckedIndex = entry.index;
  }

  /**
   * A ReadIndex read completed on `nodeId`, observing the state applied up to `observedIndex`.
   * `requiredIndex` is `maxAckedIndex` when the read was invoked (linearizability, docs/concepts.md).
   */
  observeReadCompleted(
    nodeId: NodeId,
    invokedAtMs: number,
    requiredIndex: number,
    observedIndex: number,
  ): void {
    this.#readsChecked++;
    if (observedIndex < requiredIndex) {
      this.#fail(
        'stale-read',
        `read on ${nodeId} invoked at ${invokedAtMs.toFixed(1)}ms observed applied index ${observedIndex}, ` +
          `but a write at index ${requiredIndex} was acknowledged before it began`,
      );
    }
  }
}

function sameIds(a: readonly NodeId[], b: readonly NodeId[]): boolean {
  return a.length === b.length && a.every((x, i) => b[i] === x);
}
