/**
 * Run artefacts for people: summary.md (verdict table, fault counts, op outcome counts) and
 * timeline.html (one inline SVG: fault bars, each node's role by term over time from the
 * 200 ms leader samples, and operation completions coloured by outcome). Pure string builders.
 */
import type { CheckResult, FaultEvent, HistoryOp, LeaderSample, RunRecord } from '../types.js';

/** A checker's verdict as written to verdicts.json. */
export interface Verdict extends CheckResult {
  readonly checker: string;
  /** Set when the checker threw (counted as a failure). */
  readonly error?: string;
  readonly elapsedMs: number;
}

/** A fault with its inject/heal times paired. */
export interface FaultSpan {
  readonly faultId: number;
  readonly kind: FaultEvent['kind'];
  readonly detail: string;
  readonly targets: readonly string[];
  readonly startMs: number;
  readonly endMs: number | null;
}

/** Pairs inject and heal events by faultId (heal may be missing when a run was aborted). */
export function faultSpans(faults: readonly FaultEvent[]): FaultSpan[] {
  const spans = new Map<number, FaultSpan>();
  for (const f of faults) {
    if (f.action === 'inject')
      spans.set(f.faultId, {
        faultId: f.faultId,
        kind: f.kind,
        detail: f.detail,
        targets: f.targets,
        startMs: f.timeMs,
        endMs: null,
      });
    else {
      const span = spans.get(f.faultId);
      if (span !== undefined) spans.set(f.faultId, { ...span, endMs: f.timeMs });
    }
  }
  return [...spans.values()].sort((a, b) => a.startMs - b.startMs);
}

function outcomeCounts(
  ops: readonly HistoryOp[],
): Map<string, { ok: number; fail: number; unknown: number }> {
  const counts = new Map<string, { ok: number; fail: number; unknown: number }>();
  for (const op of ops) {
    const c = counts.get(op.kind) ?? { ok: 0, fail: 0, unknown: 0 };
    c[op.outcome.status]++;
    counts.set(op.kind, c);
  }
  return counts;
}

/** Extra lines the runner wants in summary.md (backend, seed, notes). */
export interface SummaryHeader {
  readonly title: string;
  readonly facts: readonly (readonly [string, string])[];
  readonly notes: readonly string[];
}

/** Renders summary.md. */
export function renderSummary(
  header: SummaryHeader,
  run: RunRecord,
  verdicts: readonly Verdict[],
): string {
  const lines: string[] = [`# ${header.title}`, ''];
  for (const [k, v] of header.facts) lines.push(`- **${k}:** ${v}`);
  lines.push(
    '',
    '## Verdicts',
    '',
    '| checker | verdict | violations | stats | time |',
    '|---|---|---|---|---|',
  );
  for (const v of verdicts) {
    const stats = Object.entries(v.stats)
      .map(([k, x]) => `${k}=${x}`)
      .join(', ');
    lines.push(
      `| ${v.checker} | ${v.ok ? 'PASS' : 'FAIL'} | ${v.error !== undefined ? `threw: ${cell(v.error)}` : v.violations.length} | ${cell(stats)} | ${Math.round(v.elapsedMs)} ms |`,
    );
  }
  if (verdicts.length === 0) lines.push('| (none) | — | — | — | — |');
  const failing = verdicts.filter((v) => !v.ok);
  if (failing.length > 0) {
    lines.push('', '## First violations', '');
    for (const v of failing)
      for (const x of v.violations.slice(0, 5))
        lines.push(`- **${v.checker}/${x.property}:** ${x.message.replace(/\n/g, ' ')}`);
  }
  const spans = faultSpans(run.faults);
  lines.push(
    '',
    '## Faults',
    '',
    '| # | kind | detail | start (s) | held (s) |',
    '|---|---|---|---|---|',
  );
  for (const s of spans) {
    lines.push(
      `| ${s.faultId} | ${s.kind} | ${cell(s.detail)} | ${(s.startMs / 1000).toFixed(1)} | ${s.endMs === null ? 'not healed' : ((s.endMs - s.startMs) / 1000).toFixed(1)} |`,
    );
  }
  lines.push('', '## Operations', '', '| kind | ok | fail | unknown |', '|---|---|---|---|');
  for (const [kind, c] of [...outcomeCounts(run.ops)].sort())
    lines.push(`| ${kind} | ${c.ok} | ${c.fail} | ${c.unknown} |`);
  if (header.notes.length > 0) lines.push('', '## Notes', '', ...header.notes.map((n) => `- ${n}`));
  lines.push('');
  return lines.join('\n');
}

const faultColours: Record<FaultEvent['kind'], string> = {
  crash: '#d62728',
  pause: '#9467bd',
  partition: '#ff7f0e',
  netem: '#8c564b',
  clock: '#17becf',
  'restart-all': '#7f0000',
  'rolling-restart': '#bcbd22',
  membership: '#2ca02c',
};

const termPalette = [
  '#1f77b4',
  '#2ca02c',
  '#e377c2',
  '#7f7f7f',
  '#17becf',
  '#bcbd22',
  '#9467bd',
  '#8c564b',
];

/** Makes text safe inside a markdown table cell. */
const cell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

const escapeXml = (text: string): string =>
  text.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** Op marks drawn at most (sampled evenly beyond this to keep the file small). */
const opMarksMax = 20_000;

/** Renders timeline.html (self-contained, no scripts). */
export function renderTimeline(title: string, run: RunRecord): string {
  const durationMs = Math.max(run.durationMs, 1);
  const width = 1400;
  const left = 140;
  const plotW = width - left - 20;
  const x = (ms: number): number =>
    left + (Math.max(0, Math.min(ms, durationMs)) / durationMs) * plotW;
  const parts: string[] = [];
  let y = 30;
  // Time axis.
  const stepS = Math.max(1, Math.ceil(durationMs / 1000 / 20));
  for (let s = 0; s * 1000 <= durationMs; s += stepS) {
    parts.push(
      `<line x1="${x(s * 1000)}" y1="20" x2="${x(s * 1000)}" y2="__H__" stroke="#eee"/>`,
      `<text x="${x(s * 1000)}" y="14" font-size="10" text-anchor="middle">${s}s</text>`,
    );
  }
  // Faults: one lane per overlapping fault.
  parts.push(`<text x="4" y="${y + 12}" font-size="12" font-weight="bold">faults</text>`);
  const spans = faultSpans(run.faults);
  const laneEnds: number[] = [];
  for (const s of spans) {
    let lane = laneEnds.findIndex((end) => end <= s.startMs);
    if (lane < 0) lane = laneEnds.length;
    const endMs = s.endMs ?? durationMs;
    laneEnds[lane] = endMs;
    const ly = y + lane * 16;
    const w = Math.max(2, x(endMs) - x(s.startMs));
    parts.push(
      `<rect x="${x(s.startMs)}" y="${ly}" width="${w}" height="13" fill="${faultColours[s.kind]}" opacity="0.8"><title>${escapeXml(`#${s.faultId} ${s.kind}: ${s.detail} [${(s.startMs / 1000).toFixed(1)}s..${s.endMs === null ? '?' : (s.endMs / 1000).toFixed(1)}s]`)}</title></rect>`,
      `<text x="${x(s.startMs) + 2}" y="${ly + 10}" font-size="9" fill="#fff">${escapeXml(s.kind)}</text>`,
    );
  }
  y += Math.max(1, laneEnds.length) * 16 + 14;
  // Node roles from leader samples: leader (coloured by term), follower (light), unreachable (grey).
  parts.push(
    `<text x="4" y="${y - 2}" font-size="12" font-weight="bold">nodes (role by term)</text>`,
  );
  y += 6;
  const byNode = new Map<string, LeaderSample[]>();
  for (const s of run.leaderSamples) byNode.set(s.node, [...(byNode.get(s.node) ?? []), s]);
  for (const node of run.nodeIds) {
    parts.push(`<text x="4" y="${y + 12}" font-size="12">${escapeXml(node)}</text>`);
    const samples = byNode.get(node) ?? [];
    samples.forEach((s, i) => {
      const next = samples[i + 1]?.timeMs ?? Math.min(durationMs, s.timeMs + 200);
      const fill = !s.reachable
        ? '#bbb'
        : s.leader === s.node
          ? termPalette[(s.term ?? 0) % termPalette.length]!
          : s.leader === null
            ? '#fdd'
            : '#dde';
      const label = !s.reachable
        ? 'unreachable'
        : `term ${s.term} ${s.leader === s.node ? 'LEADER' : `leader=${s.leader ?? 'none'}`} commit=${s.commitIndex}`;
      parts.push(
        `<rect x="${x(s.timeMs)}" y="${y}" width="${Math.max(1, x(next) - x(s.timeMs))}" height="16" fill="${fill}"><title>${escapeXml(`${node} @${(s.timeMs / 1000).toFixed(1)}s: ${label}`)}</title></rect>`,
      );
    });
    y += 20;
  }
  // Term change labels (from leaders' own samples).
  let lastTerm = -1;
  let lastLabelX = -Infinity;
  let stagger = 0;
  for (const s of run.leaderSamples) {
    if (s.reachable && s.leader === s.node && s.term !== null && s.term > lastTerm) {
      lastTerm = s.term;
      // Labels closer than 40 px alternate between two lines so they stay readable.
      stagger = x(s.timeMs) - lastLabelX < 40 ? 1 - stagger : 0;
      lastLabelX = x(s.timeMs);
      parts.push(
        `<text x="${x(s.timeMs)}" y="${y + 10 + stagger * 10}" font-size="9">t${s.term}:${escapeXml(s.node)}</text>`,
      );
    }
  }
  y += 34;
  // Operations: one row per kind, marks at completion time (unknown at invoke time).
  parts.push(`<text x="4" y="${y - 4}" font-size="12" font-weight="bold">operations</text>`);
  const kinds = [...new Set(run.ops.map((o) => o.kind))].sort();
  const stride = Math.max(1, Math.ceil(run.ops.length / opMarksMax));
  for (const kind of kinds) {
    parts.push(`<text x="4" y="${y + 10}" font-size="10">${escapeXml(kind)}</text>`);
    run.ops.forEach((op, i) => {
      if (op.kind !== kind || (i % stride !== 0 && op.outcome.status === 'ok')) return;
      const t = op.completeMs ?? op.invokeMs;
      const colour =
        op.outcome.status === 'ok'
          ? '#2ca02c'
          : op.outcome.status === 'fail'
            ? '#d62728'
            : '#ff7f0e';
      const dy = op.outcome.status === 'ok' ? 0 : op.outcome.status === 'fail' ? 4 : 8;
      parts.push(`<rect x="${x(t)}" y="${y + dy}" width="1.5" height="4" fill="${colour}"/>`);
    });
    y += 16;
  }
  const height = y + 20;
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif">${parts.join('').replaceAll('__H__', String(height))}</svg>`;
  const legend = Object.entries(faultColours)
    .map(
      ([k, c]) =>
        `<span style="background:${c};color:#fff;padding:1px 4px;margin-right:4px">${k}</span>`,
    )
    .join('');
  return `<!doctype html><html><head><meta charset="utf-8"><title>${escapeXml(title)}</title></head><body style="font-family:sans-serif">
<h2>${escapeXml(title)}</h2>
<p>Faults: ${legend}<br>Nodes: coloured = leader (colour by term), blue-grey = follower, pink = knows no leader, grey = unreachable (200 ms samples of /v1/cluster).<br>Operations: green = ok (top), red = fail (middle), orange = unknown (bottom). Hover for details.</p>
${svg}
</body></html>
`;
}
