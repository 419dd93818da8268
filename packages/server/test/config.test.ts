// Proves configuration from flags and TENURE_* env is read through the one settings table: defaults and ranges as declared, flags win over env, every bad value or relation is reported by the flag or env var the user gave, and the Raft timing rule is the raft package's.
import t from 'tap';
import { raftTimingTicks } from '@tenure/raft';
import {
  ConfigError,
  loadConfig,
  parseHostPort,
  parsePeers,
  type ServerConfig,
} from '../src/config.js';
import { envName } from '../src/config/setting.js';
import { SERVER_SETTINGS } from '../src/config/server-settings.js';

const PEERS = 'n1=127.0.0.1:7101@127.0.0.1:7001,n2=127.0.0.1:7102@127.0.0.1:7002';
const BASE = ['--id', 'n1', '--peers', PEERS];

function thrown(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

/** The configured value of table key `key` (top level or under limits). */
function valueOf(c: ServerConfig, key: string): unknown {
  return key in c ? (c as unknown as Record<string, unknown>)[key] : (c.limits as never)[key];
}

t.test('defaults and addresses from --peers', async (t) => {
  const c = loadConfig(BASE, {}, '/srv');
  t.equal(c.httpAddress, '127.0.0.1:7001');
  t.equal(c.raftAddress, '127.0.0.1:7101');
  t.equal(c.dataDir, '/srv/data/n1');
  t.equal(c.heartbeatMs, 100);
  t.equal(c.electionTimeoutMs, 1000);
  t.equal(c.requestTimeoutMsDefault, 5000);
  t.equal(c.limits.ttlMsMin, 100);
  t.equal(c.limits.ttlMsMax, 3_600_000);
  t.equal(c.peers.length, 2);
});

t.test('every setting with a default: loadConfig gives the table default', async (t) => {
  const c = loadConfig(BASE, {});
  for (const [key, s] of Object.entries(SERVER_SETTINGS)) {
    if (s.defaultValue === undefined) continue;
    t.same(valueOf(c, key), s.defaultValue, `${s.flag} defaults to ${String(s.defaultValue)}`);
  }
});

t.test('every setting: env name follows the flag; integer ranges are enforced', async (t) => {
  for (const s of Object.values(SERVER_SETTINGS)) {
    t.equal(s.env, envName('TENURE_', s.flag));
    const m = /^(-?\d+)\.\.(-?\d+)$/.exec(s.rangeText);
    if (m === null) continue;
    const [min, max] = [Number(m[1]), Number(m[2])];
    for (const bad of [min - 1, max + 1]) {
      const e = thrown(() => loadConfig([...BASE, `--${s.flag}`, String(bad)], {}));
      t.equal(e.setting, s.flag, `--${s.flag} ${bad} is refused`);
      t.match(e.message, `${bad} is outside ${min}..${max}`);
    }
  }
});

t.test('env and flags; flags win', async (t) => {
  const c = loadConfig(['--heartbeat-ms=50'], {
    TENURE_ID: 'n2',
    TENURE_PEERS: PEERS,
    TENURE_HEARTBEAT_MS: '80',
    TENURE_TTL_MS_MAX: '9000',
  });
  t.equal(c.nodeId, 'n2');
  t.equal(c.heartbeatMs, 50);
  t.equal(c.limits.ttlMsMax, 9000);
});

/** The addresses a `--join` node must give. */
const JOINER = ['--http', '127.0.0.1:7304', '--raft', '127.0.0.1:7404'];

t.test('every bad flag is reported by its flag', async (t) => {
  const bad: [string[], string][] = [
    [['--peers', PEERS], 'id'],
    [['--id', 'n1'], 'peers'],
    [['--id', 'n3', '--peers', PEERS], 'peers'],
    [['--id', 'n1', '--peers', 'n1=nohost@127.0.0.1:1'], 'peers'],
    [['--id', 'n1', '--peers', `${PEERS},n1=1.1.1.1:1@1.1.1.1:2`], 'peers'],
    [[...BASE, '--heartbeat-ms', 'abc'], 'heartbeat-ms'],
    [[...BASE, '--heartbeat-ms', '400'], 'heartbeat-ms'],
    [[...BASE, '--heartbeat-ms', '5', '--tick-ms', '10'], 'heartbeat-ms'],
    [[...BASE, '--ttl-ms-min', '5000', '--ttl-ms-max', '1000'], 'ttl-ms-min'],
    [
      [...BASE, '--request-timeout-ms', '9000', '--request-timeout-ms-max', '8000'],
      'request-timeout-ms',
    ],
    [[...BASE, '--log-level', 'loud'], 'log-level'],
    [[...BASE, '--http', 'localhost'], 'http'],
    [[...BASE, '--http', '127.0.0.1:7301', '--raft', '127.0.0.1:7301'], 'http'],
    [[...BASE, '--bogus', '1'], 'bogus'],
    [['--id', 'n4', '--join', 'http://127.0.0.1:7001/v1/cluster', ...JOINER], 'join'],
    [['--id', 'n4', '--join', 'http://127.0.0.1:7001?x=1', ...JOINER], 'join'],
    [['--id', 'n4', '--join', 'http://u:p@127.0.0.1:7001', ...JOINER], 'join'],
    [['--id', 'n4', '--join', 'http://127.0.0.1:7001/?', ...JOINER], 'join'],
    [['--id', 'n4', '--join', 'http://127.0.0.1:7001#', ...JOINER], 'join'],
    [[...BASE, '--request-timeout-ms'], 'request-timeout-ms'],
  ];
  for (const [argv, setting] of bad) {
    const e = thrown(() => loadConfig(argv, {}));
    t.equal(e.setting, setting, `${argv.join(' ')} names ${setting}`);
    t.equal(e.source, `--${setting}`);
    t.match(e.message, `invalid setting --${setting}: `);
  }
  t.equal(
    loadConfig(['--id', 'n4', '--join', 'http://127.0.0.1:7001/', ...JOINER], {}).join,
    'http://127.0.0.1:7001',
    'a trailing slash is fine',
  );
  const stray = thrown(() => loadConfig([...BASE, 'n2'], {}));
  t.match(stray.message, 'unexpected "n2"');
});

t.test('a bad env var is reported by its env name, not a flag', async (t) => {
  const env = { TENURE_ID: 'n1', TENURE_PEERS: PEERS };
  const e = thrown(() => loadConfig([], { ...env, TENURE_HEARTBEAT_MS: 'abc' }));
  t.equal(e.setting, 'heartbeat-ms');
  t.equal(e.source, 'TENURE_HEARTBEAT_MS');
  t.equal(e.message, 'invalid setting TENURE_HEARTBEAT_MS: "abc" is not an integer');
  const rel = thrown(() =>
    loadConfig([], { ...env, TENURE_HEARTBEAT_MS: '400', TENURE_ELECTION_TIMEOUT_MS: '1000' }),
  );
  t.equal(
    rel.message,
    'invalid setting TENURE_HEARTBEAT_MS: 400 must be ≤ TENURE_ELECTION_TIMEOUT_MS / 5 (200)',
  );
  const peers = thrown(() => loadConfig([], { TENURE_ID: 'n1', TENURE_PEERS: 'garbage' }));
  t.equal(peers.source, 'TENURE_PEERS');
});

t.test(
  'IPv6 addresses in brackets, IPv4-mapped ones included; a bracketed non-address is refused',
  async (t) => {
    const v6 = 'n1=[::1]:7101@[::ffff:127.0.0.1]:7001,n2=[::1]:7102@[::1]:7002';
    const c = loadConfig(['--id', 'n1', '--peers', v6], {}, '/srv');
    t.equal(c.raftAddress, '[::1]:7101');
    t.equal(c.httpAddress, '[::ffff:127.0.0.1]:7001');
    // What the listener is given: a socket takes the address without brackets (a bracketed host
    // failed to start with getaddrinfo ENOTFOUND [::1]).
    t.same(parseHostPort('http', c.httpAddress), { host: '::ffff:127.0.0.1', port: 7001 });
    t.same(parseHostPort('http', 'localhost:7001'), { host: 'localhost', port: 7001 });
    const bad = thrown(() =>
      loadConfig(['--id', 'n1', '--peers', 'n1=[1.2.3.4]:7101@127.0.0.1:7001'], {}, '/srv'),
    );
    t.equal(bad.setting, 'peers');
    t.match(bad.message, /\[1\.2\.3\.4\] is not an IPv6 address/);
  },
);

t.test('--peers gives every listener its own address, IP spellings aside', async (t) => {
  const refused = (peers: string): string =>
    thrown(() => loadConfig(['--id', 'n1', '--peers', peers], {}, '/srv')).message;
  t.match(
    refused('n1=[::1]:7101@[::1]:7001,n2=[0::1]:7101@[::1]:7002'),
    /n2's address \[0::1\]:7101 is n1's too/,
  );
  t.match(
    refused('n1=127.0.0.1:7101@127.0.0.1:7001,n2=127.0.0.1:7102@[::ffff:127.0.0.1]:7001'),
    /n2's address \[::ffff:127\.0\.0\.1\]:7001 is n1's too/,
  );
  t.match(refused('n1=127.0.0.1:7101@127.0.0.1:7101'), /Raft and HTTP addresses are one listener/);
  t.match(
    refused('n1=127.0.0.1:7101@127.0.0.1:7001,n2=127.0.0.1:7001@127.0.0.1:7002'),
    /n2's address 127\.0\.0\.1:7001 is n1's too/,
    "a Raft address that is another member's HTTP address",
  );
  // Names are not resolved at start: localhost and 127.0.0.1 may be two listeners.
  t.ok(
    loadConfig(
      [
        '--id',
        'n1',
        '--peers',
        'n1=localhost:7101@localhost:7001,n2=127.0.0.1:7101@127.0.0.1:7002',
      ],
      {},
      '/srv',
    ),
  );
});

t.test('a malformed address says what is wrong with it', async (t) => {
  const message = (address: string): string =>
    thrown(() => loadConfig(['--id', 'n1', '--peers', `n1=${address}@127.0.0.1:7001`], {}, '/srv'))
      .message;
  t.match(message('[zz::1]:7101'), /\[zz::1\] is not an IPv6 address/);
  t.match(message('[::1:7101'), /the \[ of an IPv6 host is not closed/);
  t.match(message('[::1]'), /the :port is missing/);
  t.match(message('::1:7101'), /an IPv6 host goes in brackets, e.g. \[::1\]:7001/);
  t.match(message('127.0.0.1:99999'), /port 99999 is outside 0\.\.65535/);
});

t.test('the Raft timing rule is the raft package rule, not a copy', async (t) => {
  for (const [tickMs, heartbeatMs, electionTimeoutMs] of [
    [10, 100, 1000],
    [10, 200, 1000],
    [10, 201, 1000],
    [10, 9, 1000],
    [1, 1, 10],
    [5, 25, 150],
    [10, 50, 240],
  ] as const) {
    let raftOk = true;
    try {
      raftTimingTicks({ tickMs, heartbeatMs, electionTimeoutMs });
    } catch {
      raftOk = false;
    }
    let serverOk = true;
    try {
      loadConfig(
        [
          ...BASE,
          ...['--tick-ms', String(tickMs), '--heartbeat-ms', String(heartbeatMs)],
          ...['--election-timeout-ms', String(electionTimeoutMs)],
        ],
        {},
      );
    } catch {
      serverOk = false;
    }
    t.equal(
      serverOk,
      raftOk,
      `tick ${tickMs} heartbeat ${heartbeatMs} election ${electionTimeoutMs}`,
    );
  }
});

t.test('peers parser', async (t) => {
  t.same(parsePeers('a=h:1@h:2'), [{ id: 'a', raftAddress: 'h:1', httpAddress: 'h:2' }]);
  t.throws(() => parsePeers('a=h:1@h:2,a=h:3@h:4'), { setting: 'peers' });
});

t.test('the access log is opt-in', async (t) => {
  t.equal(loadConfig(BASE, {}).accessLog, 'off', 'off by default');
  t.equal(loadConfig([...BASE, '--access-log', 'on'], {}).accessLog, 'on');
  t.equal(loadConfig(BASE, { TENURE_ACCESS_LOG: 'on' }).accessLog, 'on', 'or from the environment');
  t.throws(() => loadConfig([...BASE, '--access-log', 'yes'], {}), /access-log/);
});

t.test(
  'a root secret while auth is off stops the node, naming --auth and TENURE_ROOT_TOKEN',
  async (t) => {
    const root = { TENURE_ROOT_TOKEN: 'a-secret' };
    t.throws(() => loadConfig(BASE, root), {
      name: 'ConfigError',
      setting: 'auth',
      message: /--auth: is off but TENURE_ROOT_TOKEN is set[\s\S]*--auth or TENURE_AUTH=on/,
    });
    t.throws(() => loadConfig(BASE, { ...root, TENURE_AUTH: 'off' }), /TENURE_AUTH: is off/);
    t.equal(loadConfig([...BASE, '--auth'], root).rootToken, 'a-secret', 'with --auth it is read');
    t.equal(loadConfig(BASE, { ...root, TENURE_AUTH: 'on' }).auth, true, 'or TENURE_AUTH=on');
    t.equal(loadConfig(BASE, { TENURE_ROOT_TOKEN: '' }).rootToken, null, 'empty counts as unset');
  },
);
