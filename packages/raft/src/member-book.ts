/**
 * The runtime's side of membership (dissertation ch. 4; docs/operations.md): which membership a
 * node boots with, where each member listens, and how a command-line peer list compares with the
 * membership recorded in the data.
 *
 * Rule: `--peers` (RaftNodeOptions.peers) bootstraps a NEW cluster only. The first open of a data
 * directory records the bootstrap membership (RaftStorage.saveBootstrap); every later open uses the
 * recorded one, then the snapshot's and the log's `config` entries on top (core/config-log.ts). A
 * peer list that disagrees is reported, never obeyed.
 */
import type { PeerInfo } from './api.js';
import type { MemberAddress, MemberAddresses, Membership } from './core/membership.js';
import { isMember } from './core/membership.js';
import type { NodeId } from './core/types.js';

/** The bootstrap membership `peers` describe: every peer a voter (none for a joining node). */
export function bootstrapFromPeers(peers: readonly PeerInfo[], join: boolean): Membership {
  return {
    voters: join ? [] : peers.map((p) => p.id),
    learners: [],
    addresses: addressesOf(peers),
  };
}

/** The address book of a peer list. */
export function addressesOf(peers: readonly PeerInfo[]): MemberAddresses {
  const out: Record<NodeId, MemberAddress> = {};
  for (const p of peers)
    out[p.id] =
      p.httpAddress === undefined
        ? { raftAddress: p.raftAddress }
        : { raftAddress: p.raftAddress, httpAddress: p.httpAddress };
  return out;
}

/**
 * Where members listen, newest knowledge last: the recorded bootstrap book, then the command line,
 * then each membership's own book as it takes effect (a member added later is known only there).
 */
export class MemberBook {
  readonly #byId = new Map<NodeId, MemberAddress>();

  /** Records every address of `book` (later calls win). */
  learn(book: MemberAddresses | undefined): void {
    if (book === undefined) return;
    for (const [id, a] of Object.entries(book)) this.#byId.set(id, a);
  }

  get(id: NodeId): MemberAddress | undefined {
    return this.#byId.get(id);
  }

  /** The whole book restricted to `ids` (those with a known address), for a new `config` entry. */
  bookFor(ids: readonly NodeId[]): MemberAddresses {
    const out: Record<NodeId, MemberAddress> = {};
    for (const id of ids) {
      const a = this.#byId.get(id);
      if (a !== undefined) out[id] = a;
    }
    return out;
  }

  /**
   * The transport's peers for membership `m` seen from `self`: every other member with a known
   * address; `missing` lists members without one (logged: they cannot be reached).
   */
  peersOf(m: Membership, self: NodeId): { peers: PeerInfo[]; missing: NodeId[] } {
    const peers: PeerInfo[] = [];
    const missing: NodeId[] = [];
    for (const id of [...m.voters, ...m.learners]) {
      if (id === self) continue;
      const a = this.#byId.get(id);
      if (a === undefined) missing.push(id);
      else peers.push({ id, ...a });
    }
    return { peers, missing };
  }
}

/** How a command-line peer list differs from the membership in effect (empty lists: it agrees). */
export interface PeersDisagreement {
  /** Listed in `peers` but not a member. */
  readonly notMembers: NodeId[];
  /** Voters missing from `peers`. */
  readonly votersNotListed: NodeId[];
  /** Listed in `peers` but only a learner. */
  readonly learnersListed: NodeId[];
}

/** Compares `peers` (all meant as voters) with `m`; null when they agree. */
export function peersDisagreement(
  peers: readonly PeerInfo[],
  m: Membership,
): PeersDisagreement | null {
  const ids = new Set(peers.map((p) => p.id));
  const notMembers = [...ids].filter((id) => !isMember(m, id));
  const votersNotListed = m.voters.filter((id) => !ids.has(id));
  const learnersListed = m.learners.filter((id) => ids.has(id));
  if (notMembers.length + votersNotListed.length + learnersListed.length === 0) return null;
  return { notMembers, votersNotListed, learnersListed };
}

/**
 * Where this node's own start addresses (`given`: its listen and advertised addresses) differ from
 * its entry in the stored membership `m` — e.g. after a move (docs/operations.md "Move a node"), a
 * restart with the old flags listens where no member looks for it. Null when they agree or `m`
 * holds no address for `id`. Only fields both sides have are compared.
 */
export function ownAddressDrift(
  id: NodeId,
  given: MemberAddress,
  m: Membership,
): { readonly stored: MemberAddress; readonly given: MemberAddress } | null {
  const stored = m.addresses?.[id];
  if (stored === undefined) return null;
  const raftDiffers = stored.raftAddress !== given.raftAddress;
  const httpDiffers =
    stored.httpAddress !== undefined &&
    given.httpAddress !== undefined &&
    stored.httpAddress !== given.httpAddress;
  return raftDiffers || httpDiffers ? { stored, given } : null;
}
