/**
 * The membership fault of the simulator (dissertation ch. 4): asked of whoever believes it leads,
 * at random moments (during partitions, crashes and pauses like every other fault):
 * - add a learner: a node outside every membership any node holds — wiped first, since a removed id
 *   may come back only with empty data (and so with no bootstrap voters, as `--join` starts);
 * - promote a learner (lagging ones too: the core must refuse them with `not_caught_up`);
 * - remove a member, the leader itself 30 % of the time;
 * - wipe a learner's data in place (it never votes, so losing its log is safe; the leader must notice
 *   its shorter log and resend it — the matchIndex clamp bug leaves it stuck).
 * The core refuses what the §4.1 rules forbid; the refusal is traced, not an error.
 */
import { decodeMembership, isMember } from '../core/membership.js';
import type { Membership, MembershipChange } from '../core/membership.js';
import type { NodeId } from '../core/types.js';
import type { SimRandom } from './prng.js';
import type { SimNode } from './sim-node.js';

/** What the membership fault needs from the simulation. */
export interface MembershipTargets {
  readonly nodes: readonly SimNode[];
  leader(): SimNode | null;
  note(line: string): void;
}

/** Inject one membership fault (see the file comment). */
export function injectMembershipFault(targets: MembershipTargets, random: SimRandom): void {
  const leader = targets.leader();
  const cs = leader?.configuration() ?? null;
  if (leader === null || cs === null) return;
  const m = cs.membership;
  // Keep at least two voters so the cluster can still survive something.
  const removable = [...m.voters, ...m.learners].filter(
    (id) => !m.voters.includes(id) || m.voters.length > 2,
  );
  const actions: (readonly [number, () => void])[] = [
    [3, () => addLearner(targets, leader, random)],
  ];
  if (m.learners.length > 0) {
    actions.push([
      3,
      () => propose(targets, leader, { type: 'promote', id: random.pick(m.learners) }),
    ]);
    actions.push([1, () => wipeLearner(targets, random.pick(m.learners), random)]);
  }
  if (removable.length > 0) {
    actions.push([
      3,
      () => {
        const id =
          removable.includes(leader.id) && random.chance(0.3) ? leader.id : random.pick(removable);
        propose(targets, leader, { type: 'remove', id });
      },
    ]);
  }
  const total = actions.reduce((sum, [w]) => sum + w, 0);
  let roll = random.between(0, total);
  for (const [weight, act] of actions) {
    if (roll < weight) return act();
    roll -= weight;
  }
}

function wipeLearner(targets: MembershipTargets, id: NodeId, random: SimRandom): void {
  const node = targets.nodes.find((n) => n.id === id)!;
  if (!node.up) return;
  targets.note(`membership: wipe learner ${node.id} in place`);
  node.wipe(random.fork());
}

function propose(targets: MembershipTargets, leader: SimNode, change: MembershipChange): void {
  const result = leader.changeMembership(change);
  const outcome =
    result === null ? 'not running' : result.ok ? `at index ${result.index}` : result.reason;
  targets.note(`membership: ${leader.id} ${change.type} ${change.id} → ${outcome}`);
}

/** Add a node no log names as a member; wipe it first so it returns empty. */
function addLearner(targets: MembershipTargets, leader: SimNode, random: SimRandom): void {
  const outsiders = targets.nodes.filter((n) => n.up && !memberAnywhere(targets, n.id));
  if (outsiders.length === 0) return;
  const node = random.pick(outsiders);
  if (node.lastIndex() > 0) {
    targets.note(`membership: wipe ${node.id} before it rejoins`);
    node.wipe(random.fork());
  }
  propose(targets, leader, { type: 'addLearner', id: node.id });
}

/** True if the newest membership in any node's log (or its bootstrap voters) names `id`. */
function memberAnywhere(targets: MembershipTargets, id: NodeId): boolean {
  return targets.nodes.some((n) => isMember(newestMembership(n), id));
}

function newestMembership(node: SimNode): Membership {
  const log = node.storage.volatileView;
  for (let i = log.lastIndex; i >= 1; i--) {
    const e = log.entryAt(i)!;
    if (e.type !== 'config') continue;
    const m = decodeMembership(e.data);
    if (m !== null) return m;
  }
  return { voters: node.bootstrapVoters, learners: [] };
}
