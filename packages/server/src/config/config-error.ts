/** A configuration problem found at start. `main.ts` prints it and exits with code 2. */
export class ConfigError extends Error {
  /** The setting's flag name without dashes, e.g. `heartbeat-ms`. */
  readonly setting: string;
  /** How the user gave it: `--heartbeat-ms` or `TENURE_HEARTBEAT_MS` (the flag when defaulted). */
  readonly source: string;
  constructor(setting: string, message: string, source = `--${setting}`) {
    super(`invalid setting ${source}: ${message}`);
    this.name = 'ConfigError';
    this.setting = setting;
    this.source = source;
  }
}
