// Proves the simulator catches broken membership rules (dissertation ch. 4): for each deliberately
// broken membership behaviour (schedules in unsafe-schedules.ts) a bounded range of membership seeds
// finds a violation, and the same seed passes with the correct core.
import t from 'tap';
import { testVariantsFound } from './unsafe-schedules.js';

testVariantsFound(t, 'membership');
