/**
 * Entry point of the pure Raft core: the RaftCore class and the protocol types it speaks.
 */
export * from './types.js';
export { RaftCore } from './raft-core.js';
export * from './membership.js';
export { catchUpEntriesMaxDefault } from './config.js';
export type { ProgressView } from './raft-core.js';
export { entrySizeBytes, entryOverheadBytes } from './raft-log.js';
export { committedEntriesPerReadyMax } from './config.js';
export { readRequestsPendingMax } from './read-only.js';
