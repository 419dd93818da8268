// Proves the node-exits checker fails a node that dies on its own (exit code 70 after a fatal
// line, as n3 did in the 30-minute run of 2026-12-02) or logs a fatal line, and passes the exits
// the harness causes: SIGKILL, a graceful SIGTERM stop (code 0) and a removed member's code 0.
import t from 'tap';
import { checkNodeExits } from './node-exits.js';

const start = (id: string, iso: string): string => `--- harness: start ${id} ${iso}`;
const exit = (id: string, code: string, signal: string, iso: string): string =>
  `--- harness: exit ${id} code=${code} signal=${signal} ${iso}`;
const info = (msg: string, extra: Record<string, unknown> = {}): string =>
  JSON.stringify({ level: 30, time: 1796190500000, nodeId: 'n', msg, ...extra });
const fatal = JSON.stringify({
  level: 60,
  time: 1796190526295,
  nodeId: 'n3',
  err: {
    type: 'AssertionError',
    message: 'committed entries must be applied in order without gaps\n\n40023 !== 40005\n',
  },
  msg: 'fatal error; exiting',
});

const clean = (id: string): string =>
  [
    start(id, '2026-12-02T05:18:56.371Z'),
    info('recovered raft storage'),
    exit(id, 'null', 'SIGKILL', '2026-12-02T05:19:42.484Z'),
    start(id, '2026-12-02T05:19:46.087Z'),
    info('signal received', { signal: 'SIGTERM' }),
    info('shutting down'),
    exit(id, '0', 'null', '2026-12-02T05:20:31.218Z'),
    start(id, '2026-12-02T05:20:32.517Z clockRate=0.9939'),
    exit(id, 'null', 'SIGTERM', '2026-12-02T05:20:44.505Z'),
    start(id, '2026-12-02T05:20:48.072Z'),
    info('leader changed'),
    exit(id, 'null', 'SIGKILL', '2026-12-02T05:49:40.289Z'),
    '',
  ].join('\n');

t.test('a clean run (SIGKILL, graceful SIGTERM, end-of-run kill) passes', async (t) => {
  const dir = t.testdir({ nodes: { 'n1.log': clean('n1'), 'n2.log': clean('n2') } });
  const r = checkNodeExits(dir);
  t.ok(r.ok, JSON.stringify(r.violations));
  t.match(r.stats, { nodeLogs: 2, starts: 8, exits: 8, exitsExplained: 8, fatalLines: 0 });
  t.equal(r.stats['exitRecords'], 'all logs');
});

t.test('a removed member exiting with code 0 by itself passes', async (t) => {
  const log = [
    start('n1', '2026-12-02T05:26:20.616Z join=http://10.77.1.13:7003'),
    info('leader changed'),
    JSON.stringify({
      level: 40,
      time: 1796189392937,
      msg: 'this node was removed from the cluster; exiting',
    }),
    info('stopped'),
    exit('n1', '0', 'null', '2026-12-02T05:29:54.632Z'),
    '--- harness: wiped n1 data (generation 2) 2026-12-02T05:29:54.884Z',
    '',
  ].join('\n');
  const r = checkNodeExits(t.testdir({ nodes: { 'n1.log': log } }));
  t.ok(r.ok, JSON.stringify(r.violations));
});

t.test(
  'an exit with code 70 after a fatal line fails, naming node, code, time and line',
  async (t) => {
    const log = [
      start('n3', '2026-12-02T05:47:40.000Z'),
      info('leader changed'),
      fatal,
      exit('n3', '70', 'null', '2026-12-02T05:48:46.609Z'),
      start('n3', '2026-12-02T05:48:50.000Z'),
      exit('n3', 'null', 'SIGKILL', '2026-12-02T05:49:40.379Z'),
      '',
    ].join('\n');
    const r = checkNodeExits(t.testdir({ nodes: { 'n3.log': log } }));
    t.notOk(r.ok);
    t.equal(r.violations.length, 1, 'the fatal line is reported with its exit, not twice');
    const v = r.violations[0]!;
    t.equal(v.property, 'node-exit');
    t.match(v.message, /node n3 exited with code 70 at 2026-12-02T05:48:46\.609Z/);
    t.match(v.message, /committed entries must be applied in order without gaps/);
    t.match(v.details, { node: 'n3', code: 70, signal: null, line: 4 });
  },
);

t.test('other unexplained exits and stray fatal lines fail', async (t) => {
  const log = [
    start('n2', '2026-12-02T05:00:00.000Z'),
    exit('n2', '2', 'null', '2026-12-02T05:00:01.000Z'),
    start('n2', '2026-12-02T05:00:02.000Z'),
    info('leader changed'),
    exit('n2', '0', 'null', '2026-12-02T05:00:03.000Z'),
    start('n2', '2026-12-02T05:00:04.000Z'),
    exit('n2', 'null', 'SIGSEGV', '2026-12-02T05:00:05.000Z'),
    start('n2', '2026-12-02T05:00:06.000Z'),
    fatal,
    exit('n2', 'null', 'SIGKILL', '2026-12-02T05:00:07.000Z'),
    '',
  ].join('\n');
  const r = checkNodeExits(t.testdir({ nodes: { 'n2.log': log } }));
  t.same(
    r.violations.map((v) => v.property),
    ['node-exit', 'node-exit', 'node-exit', 'fatal-log'],
  );
  t.match(r.violations[0]!.message, /code 2/);
  t.match(r.violations[1]!.message, /code 0 .*without logging a stop signal/);
  t.match(r.violations[2]!.message, /signal SIGSEGV/);
});

t.test(
  'compose logs (no harness lines): fatal lines still count, exits are not judged',
  async (t) => {
    const dir = t.testdir({
      nodes: { 'n1.log': `n1-1  | ${info('leader changed')}\nn1-1  | ${fatal}\n` },
    });
    const r = checkNodeExits(dir);
    t.same(
      r.violations.map((v) => v.property),
      ['fatal-log'],
    );
    t.match(r.stats['exitRecords'], /none for n1/);
    const none = checkNodeExits(t.testdir({}));
    t.ok(none.ok);
    t.match(none.stats['logs'], /none/);
  },
);
