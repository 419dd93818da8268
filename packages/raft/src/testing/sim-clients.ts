/**
 * Simulated clients: each runs one operation at a time against whichever node it believes leads —
 * a write (propose a command with a unique id) or a linearizable ReadIndex read — and follows
 * leader hints. Invocation and completion sim times feed the checkers:
 * - a write is acknowledged when the node it was proposed to applies that very entry;
 * - a read completes when the node serves its ReadIndex answer (applied ≥ read index) and observes
 *   that node's applied state; it must include every write acknowledged before the read began.
 */
import type { Entry, NodeId, ReadFailure, Term } from '../core/types.js';
import type { SafetyChecker } from './checkers.js';
import { commandIdOf, encodeCommand } from './entry-identity.js';
import type { EventQueue } from './event-queue.js';
import type { SimRandom } from './prng.js';
import type { SimNode } from './sim-node.js';

/** How clients behave; times in ms of sim time. */
export interface ClientProfile {
  /** Pause between the end of one operation and the next, uniform in [thinkMsMin, thinkMsMax]. */
  readonly thinkMsMin: number;
  readonly thinkMsMax: number;
  /** Probability that an operation is a read. */
  readonly readProbability: number;
  /** A client gives up on an operation (outcome unknown) after this long. */
  readonly opTimeoutMs: number;
}

interface WriteOp {
  readonly kind: 'write';
  readonly opId: number;
  readonly node: SimNode;
  readonly incarnation: number;
  readonly index: number;
  readonly term: Term;
  readonly commandId: number;
  readonly invokedAtMs: number;
}

interface ReadOp {
  readonly kind: 'read';
  readonly opId: number;
  readonly node: SimNode;
  readonly incarnation: number;
  readonly requestId: number;
  readonly requiredIndex: number;
  readonly invokedAtMs: number;
}

interface ClientState {
  readonly clientId: number;
  readonly profile: ClientProfile;
  leaderHint: NodeId | null;
  op: WriteOp | ReadOp | null;
  stopped: boolean;
}

/** Counters for reports. */
export interface ClientStats {
  writesInvoked: number;
  writesAcked: number;
  writesLost: number;
  readsInvoked: number;
  readsCompleted: number;
  opsTimedOut: number;
  rejected: number;
}

/** Fired when a write is acknowledged (for liveness checks). */
export type AckListener = (invokedAtMs: number, ackedAtMs: number) => void;

/** All simulated clients of one run. */
export class SimClients {
  readonly #queue: EventQueue;
  readonly #random: SimRandom;
  readonly #nodes: readonly SimNode[];
  readonly #checker: SafetyChecker;
  readonly #clients: ClientState[] = [];
  #nextCommandId = 1;
  #nextRequestId = 1;
  #nextOpId = 1;
  #ackListener: AckListener | null = null;
  readonly stats: ClientStats = {
    writesInvoked: 0,
    writesAcked: 0,
    writesLost: 0,
    readsInvoked: 0,
    readsCompleted: 0,
    opsTimedOut: 0,
    rejected: 0,
  };

  constructor(
    queue: EventQueue,
    random: SimRandom,
    nodes: readonly SimNode[],
    checker: SafetyChecker,
  ) {
    this.#queue = queue;
    this.#random = random;
    this.#nodes = nodes;
    this.#checker = checker;
  }

  /** Listen for acknowledged writes (one listener). */
  onAck(listener: AckListener): void {
    this.#ackListener = listener;
  }

  /** Add a client that starts after `startDelayMs`. Returns its id. */
  add(profile: ClientProfile, startDelayMs: number): number {
    const client: ClientState = {
      clientId: this.#clients.length + 1,
      profile,
      leaderHint: null,
      op: null,
      stopped: false,
    };
    this.#clients.push(client);
    this.#queue.after(startDelayMs, () => this.#step(client));
    return client.clientId;
  }

  /** Stop every client after its current operation. */
  stopAll(): void {
    for (const c of this.#clients) c.stopped = true;
  }

  /** Hook: `entry` was applied on `node`. Acknowledges or fails the write proposed there. */
  onApplied(node: SimNode, entry: Entry): void {
    for (const c of this.#clients) {
      const op = c.op;
      if (op === null || op.kind !== 'write' || op.node !== node || op.index !== entry.index)
        continue;
      if (op.incarnation !== node.incarnation) continue;
      if (entry.term === op.term && commandIdOf(entry.data) === op.commandId) {
        this.stats.writesAcked++;
        this.#checker.observeWriteAcked(entry, node.softState()!.term);
        this.#ackListener?.(op.invokedAtMs, this.#queue.nowMs);
      } else {
        this.stats.writesLost++;
      }
      this.#finish(c, this.#think(c));
    }
  }

  /** Hook: a ReadIndex read completed on `node`. */
  onReadServed(node: SimNode, requestId: number, observedIndex: number): void {
    for (const c of this.#clients) {
      const op = c.op;
      if (op === null || op.kind !== 'read' || op.requestId !== requestId) continue;
      this.stats.readsCompleted++;
      this.#checker.observeReadCompleted(node.id, op.invokedAtMs, op.requiredIndex, observedIndex);
      this.#finish(c, this.#think(c));
    }
  }

  /** Hook: a ReadIndex request was refused; retry where the hint points. */
  onReadFailed(_node: SimNode, failure: ReadFailure): void {
    for (const c of this.#clients) {
      const op = c.op;
      if (op === null || op.kind !== 'read' || op.requestId !== failure.requestId) continue;
      this.stats.rejected++;
      c.leaderHint = failure.leaderHint;
      this.#finish(c, this.#retryDelayMs());
    }
  }

  /** Hook: `node` crashed; operations pending there have an unknown outcome. */
  onCrashed(node: SimNode): void {
    for (const c of this.#clients) {
      if (c.op !== null && c.op.node === node) {
        c.leaderHint = null;
        this.#finish(c, this.#retryDelayMs());
      }
    }
  }

  #think(c: ClientState): number {
    return this.#random.between(c.profile.thinkMsMin, c.profile.thinkMsMax);
  }

  #retryDelayMs(): number {
    return this.#random.between(5, 50);
  }

  #finish(c: ClientState, nextInMs: number): void {
    c.op = null;
    this.#queue.after(nextInMs, () => this.#step(c));
  }

  #target(c: ClientState): SimNode {
    const hinted =
      c.leaderHint === null ? undefined : this.#nodes.find((n) => n.id === c.leaderHint);
    return hinted ?? this.#random.pick(this.#nodes);
  }

  #step(c: ClientState): void {
    if (c.op !== null || c.stopped) return;
    const node = this.#target(c);
    if (!node.up) {
      c.leaderHint = null;
      this.#queue.after(this.#retryDelayMs(), () => this.#step(c));
      return;
    }
    if (this.#random.chance(c.profile.readProbability)) this.#read(c, node);
    else this.#write(c, node);
  }

  #write(c: ClientState, node: SimNode): void {
    const commandId = this.#nextCommandId++;
    this.stats.writesInvoked++;
    const invokedAtMs = this.#queue.nowMs;
    const result = node.propose(encodeCommand(commandId, c.clientId));
    if (result === null || !result.ok) {
      this.stats.rejected++;
      c.leaderHint = result === null || result.leaderHint === node.id ? null : result.leaderHint;
      this.#queue.after(this.#retryDelayMs(), () => this.#step(c));
      return;
    }
    if (!node.up) {
      // Crashed while processing the proposal: the outcome is unknown; move on.
      this.#queue.after(this.#retryDelayMs(), () => this.#step(c));
      return;
    }
    const op: WriteOp = {
      kind: 'write',
      opId: this.#nextOpId++,
      node,
      incarnation: node.incarnation,
      index: result.index,
      term: result.term,
      commandId,
      invokedAtMs,
    };
    c.op = op;
    c.leaderHint = node.id;
    this.#armTimeout(c, op.opId);
  }

  #read(c: ClientState, node: SimNode): void {
    const op: ReadOp = {
      kind: 'read',
      opId: this.#nextOpId++,
      node,
      incarnation: node.incarnation,
      requestId: this.#nextRequestId++,
      requiredIndex: this.#checker.maxAckedIndex,
      invokedAtMs: this.#queue.nowMs,
    };
    this.stats.readsInvoked++;
    c.op = op;
    this.#armTimeout(c, op.opId);
    if (!node.readIndex(op.requestId) && c.op === op) {
      // Paused (no answer): try elsewhere rather than wait for the timeout.
      c.leaderHint = null;
      this.#finish(c, this.#retryDelayMs());
    }
  }

  #armTimeout(c: ClientState, opId: number): void {
    this.#queue.after(c.profile.opTimeoutMs, () => {
      if (c.op === null || c.op.opId !== opId) return;
      this.stats.opsTimedOut++;
      c.leaderHint = null;
      this.#finish(c, 0);
    });
  }
}
