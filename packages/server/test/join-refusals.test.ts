// Proves `--join` refuses at once, saying why, where it used to wait forever (docs/operations.md,
// docs/security.md): a member that answers 401 (auth on, no admin token in TENURE_ROOT_TOKEN), and
// a cluster whose id is not this node's (its Raft peers would refuse each other for good).
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import t from 'tap';
import { loadConfig } from '../src/config.js';
import { joinPeers, peerCalls, StartRefusedError } from '../src/cluster/membership-startup.js';
import { harness } from './fixtures/harness.js';

async function member(args: string[]): Promise<{ url: string; close: () => Promise<void> }> {
  const h = await harness(args);
  await h.app.listen({ host: '127.0.0.1', port: 0 });
  return {
    url: `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`,
    close: h.close,
  };
}

function joiner(join: string, extra: string[], env: NodeJS.ProcessEnv = {}) {
  return loadConfig(
    ['--id', 'n9', '--join', join, '--http', '127.0.0.1:1', '--raft', '127.0.0.1:2', ...extra],
    env,
  );
}

async function refusal(config: ReturnType<typeof joiner>): Promise<unknown> {
  const calls = peerCalls(config);
  try {
    return await joinPeers(config, calls, pino({ level: 'silent' })).catch((e: unknown) => e);
  } finally {
    await calls.dispatcher.close();
  }
}

t.test('a member that answers 401: refused, naming TENURE_ROOT_TOKEN', async (t) => {
  const m = await member(['--auth']);
  t.teardown(m.close);
  const err = await refusal(joiner(m.url, ['--auth']));
  t.ok(err instanceof StartRefusedError, 'refused at once');
  t.match((err as Error).message, /401[\s\S]*admin token in TENURE_ROOT_TOKEN/);
});

t.test('a cluster with another id: refused, naming the id to use', async (t) => {
  const m = await member([]);
  t.teardown(m.close);
  const err = await refusal(joiner(m.url, ['--cluster-id', 'not-theirs']));
  t.ok(err instanceof StartRefusedError, 'refused at once');
  t.match((err as Error).message, /has cluster id "[^"]+" and this node "not-theirs"/);
  t.match((err as Error).message, /--cluster-id /);
});
