// Proves configuration from flags and TENURE_* env is validated at start with an error naming the setting.
import t from 'tap';
import { ConfigError, loadConfig, parsePeers, settingsTable } from '../src/config.js';

const PEERS = 'n1=127.0.0.1:7101@127.0.0.1:7001,n2=127.0.0.1:7102@127.0.0.1:7002';

t.test('defaults and addresses from --peers', async (t) => {
  const c = loadConfig(['--id', 'n1', '--peers', PEERS], {}, '/srv');
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

t.test('every bad setting names the setting', async (t) => {
  const bad: [string[], string][] = [
    [['--peers', PEERS], 'id'],
    [['--id', 'n1'], 'peers'],
    [['--id', 'n3', '--peers', PEERS], 'peers'],
    [['--id', 'n1', '--peers', 'n1=nohost@127.0.0.1:1'], 'peers'],
    [['--id', 'n1', '--peers', `${PEERS},n1=1.1.1.1:1@1.1.1.1:2`], 'peers'],
    [['--id', 'n1', '--peers', PEERS, '--heartbeat-ms', 'abc'], 'heartbeat-ms'],
    [['--id', 'n1', '--peers', PEERS, '--heartbeat-ms', '400'], 'election-timeout-ms'],
    [
      ['--id', 'n1', '--peers', PEERS, '--ttl-ms-min', '5000', '--ttl-ms-max', '1000'],
      'ttl-ms-min',
    ],
    [['--id', 'n1', '--peers', PEERS, '--log-level', 'loud'], 'log-level'],
    [['--id', 'n1', '--peers', PEERS, '--http', 'localhost'], 'http'],
    [['--id', 'n1', '--peers', PEERS, '--bogus', '1'], 'bogus'],
    [['--id', 'n1', '--peers', PEERS, '--request-timeout-ms'], 'request-timeout-ms'],
  ];
  for (const [argv, setting] of bad) {
    let caught: unknown = null;
    try {
      loadConfig(argv, {});
    } catch (err) {
      caught = err;
    }
    t.ok(caught instanceof ConfigError, `${argv.join(' ')} throws ConfigError`);
    t.equal((caught as ConfigError).setting, setting, `${argv.join(' ')} names ${setting}`);
    t.match((caught as Error).message, `--${setting}`);
  }
});

t.test('peers parser and README table', async (t) => {
  t.same(parsePeers('a=h:1@h:2'), [{ id: 'a', raftAddress: 'h:1', httpAddress: 'h:2' }]);
  t.match(settingsTable(), /\| `--election-timeout-ms` \| `TENURE_ELECTION_TIMEOUT_MS` \| 1000 \|/);
});
