/**
 * Layout of the local cluster started by the launcher: nodes n1..nN on consecutive loopback
 * ports (HTTP from `httpPort`, Raft from `raftPort`), data under `<dataDir>/<id>`.
 */
import { join } from 'node:path';

export interface LocalNodeSpec {
  readonly id: string;
  readonly httpAddress: string;
  readonly raftAddress: string;
  readonly dataDir: string;
}

/** Node specs n1..n`nodes`; e.g. defaults give n1 = HTTP 127.0.0.1:7001, Raft 127.0.0.1:7101. */
export function localNodes(o: {
  readonly host: string;
  readonly httpPort: number;
  readonly raftPort: number;
  readonly nodes: number;
  readonly dataDir: string;
}): LocalNodeSpec[] {
  return Array.from({ length: o.nodes }, (_, i) => ({
    id: `n${i + 1}`,
    httpAddress: `${o.host}:${o.httpPort + i}`,
    raftAddress: `${o.host}:${o.raftPort + i}`,
    dataDir: join(o.dataDir, `n${i + 1}`),
  }));
}
