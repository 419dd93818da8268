// Proves @tenure/client is self-contained and publishable: `npm pack` in packages/client gives a
// tarball that installs (from the npm cache where it can; the registry for what the cache lacks) into an empty directory outside the repository
// with no other @tenure package; its type declarations check on their own; its `tenure` bin runs; and
// its TenureClient reports an unreachable endpoint as a clean TenureError and acquires and releases a
// lease on a real local cluster.
import t from 'tap';
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '@tenure/testkit';
import { LocalCluster, REPO_ROOT } from '../support/cluster.js';

const CLIENT_DIR = join(REPO_ROOT, 'packages', 'client');
const VERSION = '0.1.0';
/** Generous bound on one npm or node child process on a loaded machine (ms). */
const CHILD_TIMEOUT_MS = 240_000;

/** Runs `command args` in `cwd`; resolves with stdout, rejects with stderr on a non-zero exit. */
function run(command: string, args: readonly string[], cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { cwd, timeout: CHILD_TIMEOUT_MS }, (error, stdout, stderr) => {
      if (error)
        reject(new Error(`${command} ${args.join(' ')} failed: ${error.message}\n${stderr}`));
      else resolve(stdout);
    });
  });
}

const CONSUMER_SCRIPT = `
import { TenureClient, TenureError } from '@tenure/client';
const [mode, endpoint] = process.argv.slice(2);
const client = new TenureClient({ endpoints: [endpoint], requestTimeoutMs: 60000 });
if (mode === 'unreachable') {
  try {
    await new TenureClient({ endpoints: [endpoint], requestTimeoutMs: 2000 }).cluster();
    console.log(JSON.stringify({ answered: true }));
  } catch (error) {
    console.log(JSON.stringify({ isTenureError: error instanceof TenureError, code: error.code }));
  }
} else {
  const lease = await client.acquire('packed-client', { ttlMs: 600000, autoRenew: false });
  const released = await lease.release();
  console.log(JSON.stringify({ fencingToken: lease.fencingToken, released }));
}
`;

const CONSUMER_TYPES = `
import { TenureClient, TenureError, type ErrorCode, type Lease } from '@tenure/client';
const code: ErrorCode = 'held';
export async function hold(client: TenureClient): Promise<Lease> {
  try {
    return await client.acquire('x', { ttlMs: 1000 });
  } catch (error) {
    if (error instanceof TenureError && error.code === code) throw error;
    throw error;
  }
}
`;

t.test('the packed client installs and works outside the repository', async (t) => {
  t.setTimeout(900_000);
  const work = mkdtempSync(join(tmpdir(), 'tenure-packed-client-'));
  t.teardown(() => rmSync(work, { recursive: true, force: true }));
  t.notOk(work.startsWith(REPO_ROOT), 'the consumer directory is outside the repository');

  await run('npm', ['pack', '--pack-destination', work], CLIENT_DIR);
  const tarball = join(work, `tenure-client-${VERSION}.tgz`);
  const consumer = join(work, 'consumer');
  await run('mkdir', [consumer], work);
  writeFileSync(
    join(consumer, 'package.json'),
    JSON.stringify({ name: 'consumer', private: true, type: 'module' }),
  );
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', tarball], consumer);
  t.same(
    readdirSync(join(consumer, 'node_modules', '@tenure')),
    ['client'],
    'no other @tenure package',
  );

  const bin = join(consumer, 'node_modules', '.bin', 'tenure');
  t.equal((await run(bin, ['--version'], consumer)).trim(), VERSION, 'the tenure bin runs');

  writeFileSync(join(consumer, 'consumer.ts'), CONSUMER_TYPES);
  writeFileSync(
    join(consumer, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        noEmit: true,
        skipLibCheck: false,
        types: ['node'],
        typeRoots: [join(REPO_ROOT, 'node_modules', '@types')],
      },
      files: ['consumer.ts'],
    }),
  );
  const tsc = join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  await run(process.execPath, [tsc, '-p', consumer], consumer);
  t.pass('the declarations type-check without any other @tenure package');

  writeFileSync(join(consumer, 'consumer.mjs'), CONSUMER_SCRIPT);
  const script = join(consumer, 'consumer.mjs');
  const endpoint = `http://127.0.0.1:${await freePort()}`;
  const unreachable = JSON.parse(
    await run(process.execPath, [script, 'unreachable', endpoint], consumer),
  ) as unknown;
  t.same(unreachable, { isTenureError: true, code: 'unavailable' }, 'a clean error, no answer');

  const cluster = await LocalCluster.start();
  t.teardown(() => cluster.teardown());
  const leader = cluster.nodes[0]!.url;
  const used = JSON.parse(await run(process.execPath, [script, 'cluster', leader], consumer)) as {
    fencingToken?: unknown;
    released?: unknown;
  };
  t.type(used.fencingToken, 'number', 'acquired on a real cluster');
  t.equal(used.released, true, 'and released');
});
