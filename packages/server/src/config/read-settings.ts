/**
 * Reads a settings table from the command line (commander) and the environment: flag, else env
 * var, else the row's default. Errors name what the user typed: `--heartbeat-ms` for a flag,
 * `TENURE_HEARTBEAT_MS` for an env var. `--help` and `--version` come from the same rows.
 */
import { Command, CommanderError, Option } from 'commander';
import { ConfigError } from './config-error.js';
import { SettingValueError, type Setting, type SettingValue } from './setting.js';

/** A settings table: config key → setting. */
export type SettingsTable = Readonly<Record<string, Setting<unknown>>>;

/** Every key of the table with its value after defaults. */
export type SettingValues<S extends SettingsTable> = { [K in keyof S]: SettingValue<S[K]> };

/** Values plus where each came from, for errors about relations between settings. */
export interface ReadSettings<S extends SettingsTable> {
  readonly values: SettingValues<S>;
  /** `--flag` or `ENV_NAME` as the user gave it; the flag when the default was used. */
  sourceOf(key: keyof S): string;
  /** True when the user gave `key` (flag or env), false when its default is used. */
  given(key: keyof S): boolean;
  /** A ConfigError about `key`, named the way the user gave it. */
  error(key: keyof S, message: string): ConfigError;
}

/** What `commandFor` puts in `--help` and `--version`. */
export interface CommandInfo {
  readonly name: string;
  readonly description: string;
  readonly version: string;
  /** Text after the options list (e.g. examples). */
  readonly helpAfter?: string;
}

function optionHelp(s: Setting<unknown>): string {
  const range = s.rangeText === '' ? '' : `; ${s.rangeText}${s.unit === null ? '' : ` ${s.unit}`}`;
  return `${s.doc} [env ${s.env}; default ${s.defaultText}${range}]`.replace(/`/g, '');
}

/** A commander Command with one `--flag <value>` option per row; help/version; never exits. */
export function commandFor(table: SettingsTable, info: CommandInfo): Command {
  const cmd = new Command(info.name)
    .description(info.description)
    .version(info.version, '-V, --version', 'print the version and exit')
    .helpOption('-h, --help', 'print this help and exit')
    .allowExcessArguments(false)
    .exitOverride()
    .configureOutput({ outputError: () => {} });
  for (const s of Object.values(table)) {
    if (s.bare === undefined)
      cmd.addOption(new Option(`--${s.flag} <${s.valueName}>`, optionHelp(s)));
    else cmd.addOption(new Option(`--${s.flag} [${s.valueName}]`, optionHelp(s)).preset(s.bare));
  }
  if (info.helpAfter !== undefined) cmd.addHelpText('after', `\n${info.helpAfter}`);
  return cmd;
}

/** The flag a commander parse error is about (`--bogus`), or `argv`. */
function flagOfCommanderError(err: CommanderError): string {
  const m = /'(--?[^' ]+)/.exec(err.message);
  return m === null ? 'argv' : m[1]!.replace(/^-+/, '');
}

/** The first argument that is neither a flag nor a flag's value (every option takes a value). */
function strayArgument(argv: readonly string[]): string {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (!a.startsWith('-')) return a;
    if (!a.includes('=')) i++;
  }
  return '';
}

/**
 * Parse `argv` (without node and script) with `cmd`. Returns raw text per flag given. Throws
 * ConfigError for unknown flags, missing values and stray arguments; lets commander's
 * CommanderError for `--help` / `--version` (exitCode 0, text already printed) through.
 */
export function parseFlags(cmd: Command, argv: readonly string[]): Map<string, string> {
  try {
    cmd.parse([...argv], { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError && err.code === 'commander.excessArguments') {
      const message = `unexpected "${strayArgument(argv)}" (settings look like --name value)`;
      throw new ConfigError('argv', message, 'arguments');
    }
    if (err instanceof CommanderError && err.exitCode !== 0) {
      const flag = flagOfCommanderError(err);
      throw new ConfigError(flag, err.message.replace(/^error: /, ''), `--${flag}`);
    }
    throw err;
  }
  const out = new Map<string, string>();
  for (const o of cmd.options) {
    const v: unknown = cmd.getOptionValue(o.attributeName());
    if (typeof v === 'string') out.set(o.long!.slice(2), v);
  }
  return out;
}

/** Apply each row to the flags given and `env`. Throws ConfigError naming flag or env var. */
export function readSettings<S extends SettingsTable>(
  table: S,
  flags: ReadonlyMap<string, string>,
  env: NodeJS.ProcessEnv,
): ReadSettings<S> {
  const values: Record<string, unknown> = {};
  const sources: Record<string, string> = {};
  const givenKeys = new Set<string>();
  for (const [key, s] of Object.entries(table)) {
    const fromFlag = flags.get(s.flag);
    const fromEnv = env[s.env] === '' ? undefined : env[s.env];
    const source = fromFlag !== undefined ? `--${s.flag}` : fromEnv !== undefined ? s.env : null;
    sources[key] = source ?? `--${s.flag}`;
    if (source !== null) givenKeys.add(key);
    const text = fromFlag ?? fromEnv;
    if (text === undefined) {
      values[key] = s.defaultValue;
      continue;
    }
    try {
      values[key] = s.parse(text);
    } catch (err) {
      if (!(err instanceof SettingValueError)) throw err;
      throw new ConfigError(s.flag, err.message, source!);
    }
  }
  return {
    values: values as SettingValues<S>,
    sourceOf: (key) => sources[key as string]!,
    given: (key) => givenKeys.has(key as string),
    error: (key, message) =>
      new ConfigError(table[key as string]!.flag, message, sources[key as string]!),
  };
}
