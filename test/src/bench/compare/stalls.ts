/**
 * Stalls of Tenure's server processes during a cell (docs/operations.md, Monitoring): the bench
 * scrapes every node's `/metrics` just before and just after a run. The first scrape starts a new
 * event-loop window, the second reads it (`tenure_event_loop_delay_seconds`), and the GC pause
 * counters (`tenure_gc_pause_seconds_total`) are subtracted. The only scraper during a run must be
 * the bench, or the windows are cut short.
 */

/** One scrape of a node: the window's event-loop delay (s) and the GC pause total so far (s). */
export interface StallReading {
  readonly loopDelayP99S: number;
  readonly loopDelayMaxS: number;
  readonly gcPauseS: number;
}

/** A node's stalls over one run: event-loop delay p99 and largest (ms), GC pause ms per second. */
export interface RunStalls {
  readonly loopDelayP99Ms: number;
  readonly loopDelayMaxMs: number;
  readonly gcMsPerS: number;
}

/** Reads the stall metrics out of a Prometheus text page; a missing metric reads 0. */
export function parseStalls(text: string): StallReading {
  let loopDelayP99S = 0;
  let loopDelayMaxS = 0;
  let gcPauseS = 0;
  for (const line of text.split('\n')) {
    const m = /^(\w+)\{([^}]*)\} (\S+)$/.exec(line);
    if (m === null) continue;
    const [, name, labels, value] = m;
    if (name === 'tenure_event_loop_delay_seconds' && labels === 'quantile="0.99"')
      loopDelayP99S = Number(value);
    if (name === 'tenure_event_loop_delay_seconds' && labels === 'quantile="1"')
      loopDelayMaxS = Number(value);
    if (name === 'tenure_gc_pause_seconds_total') gcPauseS += Number(value);
  }
  return { loopDelayP99S, loopDelayMaxS, gcPauseS };
}

/** Scrapes `url`/metrics; null when the node does not answer. */
export async function scrapeStalls(url: string): Promise<StallReading | null> {
  try {
    const res = await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(5_000) });
    return res.ok ? parseStalls(await res.text()) : null;
  } catch {
    return null;
  }
}

/** A node's stalls over a run of `seconds` from the scrapes before and after it. */
export function stallsBetween(
  before: StallReading,
  after: StallReading,
  seconds: number,
): RunStalls {
  const round = (x: number) => Number(x.toFixed(2));
  return {
    loopDelayP99Ms: round(after.loopDelayP99S * 1000),
    loopDelayMaxMs: round(after.loopDelayMaxS * 1000),
    gcMsPerS: round(((after.gcPauseS - before.gcPauseS) * 1000) / seconds),
  };
}
