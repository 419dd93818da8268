/**
 * The local launcher's settings (`npm start`, `npm run node -- <id>`), declared like the server's:
 * flag, env var, default, range, unit and meaning in one row; `--help`, the launcher and
 * docs/configuration.md read them, so every option the launcher accepts is listed from this one
 * table. Flags after `--` go to every node unchanged.
 */
import { NODE_ID_RE } from '../config/addresses.js';
import { intSetting, patternSetting, switchSetting, textSetting } from '../config/setting.js';

const envPrefix = 'TENURE_LAUNCH_';

/** Raft ports sit this far above the HTTP ports unless `--raft-port` is given. */
export const RAFT_PORT_OFFSET = 100;

/** The launcher settings table. */
export const LAUNCHER_SETTINGS = {
  host: patternSetting({
    flag: 'host',
    envPrefix,
    valueName: 'host',
    pattern: /^[A-Za-z0-9.-]+$/,
    rangeText: 'a host name or IPv4 address',
    default: '127.0.0.1',
    doc: 'Address every node listens on.',
  }),
  httpPort: intSetting({
    flag: 'http-port',
    envPrefix,
    unit: 'port',
    min: 1,
    max: 65535,
    default: 7001,
    doc: 'HTTP port of n1; n2, n3, ... take the next ones.',
  }),
  raftPort: intSetting({
    flag: 'raft-port',
    envPrefix,
    unit: 'port',
    min: 1,
    max: 65535,
    default: undefined,
    defaultText: `\`--http-port\` + ${RAFT_PORT_OFFSET}`,
    doc: 'Raft port of n1; n2, n3, ... take the next ones.',
  }),
  nodes: intSetting({
    flag: 'nodes',
    envPrefix,
    unit: 'count',
    min: 1,
    max: 9,
    default: 3,
    doc: 'Number of nodes, n1..nN.',
  }),
  dataDir: textSetting<string, string>({
    flag: 'data-dir',
    envPrefix,
    valueName: 'dir',
    default: 'data',
    defaultText: '`./data`',
    parse: (text) => text,
    doc: 'Data of node nK goes to `<dir>/nK`; the cluster id is kept in `<dir>/cluster-id`.',
  }),
  restore: textSetting<string>({
    flag: 'restore',
    envPrefix,
    valueName: 'file',
    default: undefined,
    defaultText: '(none)',
    parse: (text) => text,
    doc: 'Seed every node (empty data directories) from this backup file: a new cluster.',
  }),
  only: patternSetting({
    flag: 'only',
    envPrefix,
    valueName: 'id',
    pattern: NODE_ID_RE,
    rangeText: 'a node id of this layout',
    default: undefined,
    defaultText: '(all nodes)',
    doc: 'Start just this node, with the same layout and data (`npm run node -- <id>`).',
  }),
  secure: switchSetting({
    flag: 'secure',
    envPrefix,
    default: false,
    doc:
      'TLS on the API and between peers with a generated CA and node certificates, and auth ' +
      'with a root token (kept under `--data-dir`; docs/security.md).',
  }),
};
