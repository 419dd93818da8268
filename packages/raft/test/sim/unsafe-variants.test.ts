// Proves the simulator's checkers can fail: for each deliberately broken core behaviour that any
// run can exercise (UnsafeVariants; schedules in unsafe-schedules.ts) a bounded range of seeds finds
// a violation, and the same seed passes with the correct core.
import t from 'tap';
import { testVariantsFound } from './unsafe-schedules.js';

testVariantsFound(t, 'plain');
