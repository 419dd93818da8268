/**
 * One row of a settings table: a setting's flag, environment variable, default, range, unit and
 * meaning together, plus the parser of its text. `tenure-server` (server-settings.ts) and the local
 * launcher (cluster/launcher-settings.ts) declare their settings with these constructors;
 * `--help`, loadConfig, docs/configuration.md and the tests all read the same rows.
 */

/** Unit of a numeric setting, shown in `--help` and docs/configuration.md. */
export type SettingUnit = 'ms' | 'bytes' | 'entries' | 'count' | 'port';

/** Thrown by `Setting.parse` on bad text; the caller adds which flag or env var it came from. */
export class SettingValueError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SettingValueError';
  }
}

/** A declared setting whose values have type T; D is the type of its default (undefined: none). */
export interface Setting<T, D extends T | undefined = T | undefined> {
  /** Flag name without the dashes, e.g. `heartbeat-ms`. */
  readonly flag: string;
  /** Environment variable, e.g. `TENURE_HEARTBEAT_MS` (the flag wins over it). */
  readonly env: string;
  /** Placeholder of the value in `--help`, e.g. `ms`, `host:port`. */
  readonly valueName: string;
  readonly unit: SettingUnit | null;
  /** What the setting does (markdown, one sentence or two). */
  readonly doc: string;
  /** Value when neither flag nor env is given; undefined = required, or derived (defaultText). */
  readonly defaultValue: D;
  /** The default as documented, e.g. `100`, `(required)`, `this node's address in --peers`. */
  readonly defaultText: string;
  /** Accepted values as documented, e.g. `1..60000`; empty when any text the parser takes. */
  readonly rangeText: string;
  /** Parse the flag or env text. Throws SettingValueError saying what is wrong. */
  parse(text: string): T;
  /** Text the flag stands for when given without a value (`--auth` = `--auth on`); absent = a value is required. */
  readonly bare?: string;
}

/** Value type of a Setting after defaults: T, or T | undefined when it has no default. */
export type SettingValue<S> =
  S extends Setting<infer T, infer D> ? (undefined extends D ? T | undefined : T) : never;

/** `TENURE_HEARTBEAT_MS` from prefix `TENURE_` and flag `heartbeat-ms`: the naming rule. */
export function envName(prefix: string, flag: string): string {
  return prefix + flag.toUpperCase().replace(/-/g, '_');
}

interface Common {
  readonly flag: string;
  readonly envPrefix: string;
  readonly doc: string;
}

/** An integer setting in [min, max] with a unit. */
export function intSetting<D extends number | undefined>(
  o: Common & {
    readonly unit: SettingUnit;
    readonly min: number;
    readonly max: number;
    readonly default: D;
    readonly defaultText?: string;
  },
): Setting<number, D> {
  return {
    flag: o.flag,
    env: envName(o.envPrefix, o.flag),
    valueName: o.unit === 'count' ? 'n' : o.unit,
    unit: o.unit,
    doc: o.doc,
    defaultValue: o.default,
    defaultText: o.defaultText ?? String(o.default),
    rangeText: `${o.min}..${o.max}`,
    parse(text) {
      if (!/^-?\d+$/.test(text)) throw new SettingValueError(`"${text}" is not an integer`);
      const n = Number(text);
      if (n < o.min || n > o.max) throw new SettingValueError(`${n} is outside ${o.min}..${o.max}`);
      return n;
    },
  };
}

/** A text setting checked by `parse` (which may also convert it, e.g. a peers list). */
export function textSetting<T, D extends T | undefined = undefined>(
  o: Common & {
    readonly valueName: string;
    readonly default: D;
    readonly defaultText: string;
    readonly rangeText?: string;
    readonly parse: (text: string) => T;
  },
): Setting<T, D> {
  return {
    flag: o.flag,
    env: envName(o.envPrefix, o.flag),
    valueName: o.valueName,
    unit: null,
    doc: o.doc,
    defaultValue: o.default,
    defaultText: o.defaultText,
    rangeText: o.rangeText ?? '',
    parse: o.parse,
  };
}

/** A text setting matching `pattern` (described by `rangeText`). */
export function patternSetting<D extends string | undefined>(
  o: Common & {
    readonly valueName: string;
    readonly pattern: RegExp;
    readonly rangeText: string;
    readonly default: D;
    readonly defaultText?: string;
  },
): Setting<string, D> {
  return textSetting<string, D>({
    ...o,
    defaultText: o.defaultText ?? String(o.default),
    parse(text) {
      if (!o.pattern.test(text)) throw new SettingValueError(`"${text}" must be ${o.rangeText}`);
      return text;
    },
  });
}

/** One of a fixed list of words. */
export function choiceSetting<const C extends string>(
  o: Common & { readonly choices: readonly C[]; readonly default: C },
): Setting<C, C> {
  const list = o.choices.join(', ');
  return textSetting<C, C>({
    ...o,
    valueName: 'name',
    defaultText: o.default,
    rangeText: list,
    parse(text) {
      if (!(o.choices as readonly string[]).includes(text))
        throw new SettingValueError(`"${text}" must be one of ${list}`);
      return text as C;
    },
  });
}

/** An on/off switch: `on`/`off` (also `true`/`false`, `1`/`0`); the bare flag means on. */
export function switchSetting(
  o: Common & { readonly default: boolean },
): Setting<boolean, boolean> {
  return {
    ...textSetting<boolean, boolean>({
      ...o,
      valueName: 'on|off',
      default: o.default,
      defaultText: o.default ? 'on' : 'off',
      rangeText: 'on, off',
      parse(text) {
        if (['on', 'true', '1'].includes(text)) return true;
        if (['off', 'false', '0'].includes(text)) return false;
        throw new SettingValueError(`"${text}" must be on or off`);
      },
    }),
    bare: 'on',
  };
}
