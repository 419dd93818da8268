// Proves every log line of a node carries `nodeId` exactly once, for server lines and for Raft's child loggers (which bind their own nodeId), plus the current term.
import t from 'tap';
import { Writable } from 'node:stream';
import { createLoggers } from '../src/logger.js';

t.test('nodeId appears once per line, server and raft loggers alike', async (t) => {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(
        ...chunk
          .toString('utf8')
          .split('\n')
          .filter((l) => l.length > 0),
      );
      cb();
    },
  });
  const { logger, raftLogger } = createLoggers('n1', 'info', () => 7, sink);
  logger.info('server line');
  logger.child({ component: 'http' }).info('http line');
  // What RaftNode.open does with the logger it is given (packages/raft/src/raft-node.ts).
  raftLogger.child({ component: 'raft', nodeId: 'n1' }).info('raft line');
  raftLogger.child({ component: 'raft-transport', nodeId: 'n1' }).info('transport line');
  t.equal(lines.length, 4);
  for (const line of lines) {
    t.equal(line.match(/"nodeId":/g)?.length, 1, `one nodeId in ${line}`);
    const o = JSON.parse(line) as { nodeId: string; term: number };
    t.equal(o.nodeId, 'n1');
    t.equal(o.term, 7);
  }
});
