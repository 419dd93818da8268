/**
 * Signals a node process understands (main.ts): SIGTERM / SIGINT stop it gracefully, a leader
 * handing leadership over first; CLUSTER_STOP_SIGNAL stops it gracefully without that transfer,
 * because the whole cluster is stopping (the local-cluster launcher's Ctrl-C) and a transfer to a
 * node that is itself stopping could only fail after a wait.
 */

/** "The whole cluster is stopping": graceful stop, no leadership transfer. */
export const CLUSTER_STOP_SIGNAL = 'SIGUSR2' as const satisfies NodeJS.Signals;
