/**
 * The simulator's seeded stream: the package's one generator (../random.ts) under the name the
 * simulator and its users already know.
 */
export { SeededRandom as SimRandom } from '../random.js';
