#!/usr/bin/env node
/**
 * `tenure-server`: start one node from flags / TENURE_* env (docs/configuration.md). Exit codes:
 * 2 bad configuration (the message names the flag or env var) or a refused start (data of a removed
 * member, an empty data directory of a member that had data: docs/operations.md), 1 start-up
 * failure, 0 after a graceful shutdown, `--help` / `--version`, or once removed from the cluster.
 * Signals: SIGTERM / SIGINT stop gracefully (a leader transfers leadership first); SIGUSR2
 * (`CLUSTER_STOP_SIGNAL`, sent by the launcher when the whole cluster stops) stops gracefully
 * without the transfer. A second signal exits at once.
 */
import { CommanderError } from 'commander';
import { ConfigError, loadConfig, type ServerConfig } from './config.js';
import { RemovedMemberError } from '@tenure/raft';
import { startNode } from './node.js';
import { RestoreError, restoreDataDir } from './restore.js';
import { StartRefusedError } from './cluster/membership-startup.js';
import { CLUSTER_STOP_SIGNAL } from './stop-signals.js';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig(process.argv.slice(2));
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`tenure-server: ${err.message} (see tenure-server --help)\n`);
      process.exit(2);
    }
    if (err instanceof CommanderError) process.exit(err.exitCode); // --help, --version
    throw err;
  }
  if (config.restoreFile !== null) await restore(config.restoreFile, config);
  let node;
  try {
    node = await startNode(config);
  } catch (err) {
    process.stderr.write(
      `tenure-server: node ${config.nodeId} failed to start: ${err instanceof Error ? err.message : String(err)}\n`,
    );
    // A refusal about membership or data (removed member, lost data, join refused) is exit 2.
    const refused = err instanceof StartRefusedError || err instanceof RemovedMemberError;
    process.exit(refused ? 2 : 1);
  }
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals): void => {
    signals++;
    if (signals > 1) {
      node.logger.warn({ signal }, 'second signal; exiting now');
      process.exit(1);
    }
    const wholeCluster = signal === CLUSTER_STOP_SIGNAL;
    node.logger.info(
      { signal },
      wholeCluster ? 'cluster shutdown signal received' : 'signal received',
    );
    node.stop({ transferLeadership: !wholeCluster }).then(
      () => process.exit(0),
      (err: unknown) => {
        node.logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  process.on(CLUSTER_STOP_SIGNAL, onSignal);
}

/** `--restore`: seed the data directory, or exit 1 naming what is wrong (no node starts). */
async function restore(file: string, config: ServerConfig): Promise<void> {
  try {
    const done = await restoreDataDir(config, file, config.tokenFloor);
    process.stderr.write(
      `tenure-server: restored ${config.dataDir} from ${file} (cluster ${done.backup.clusterId} at index ` +
        `${done.backup.index}); the new cluster ${config.clusterId} continues at index ${done.restoredIndex}\n`,
    );
  } catch (err) {
    if (!(err instanceof RestoreError)) throw err;
    process.stderr.write(`tenure-server: restore refused: ${err.message}\n`);
    process.exit(1);
  }
}

void main();
