/** Writes one run as JSON (everything), a Markdown table and an SVG chart, named <time>-<commit>. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BenchResult, ScenarioResult } from './bench-types.ts';

const fmt = (n: number, digits = 0) =>
  n.toLocaleString('en', { minimumFractionDigits: digits, maximumFractionDigits: digits });

export function baseName(result: BenchResult): string {
  const time = result.startedAt.replace(/\.\d+Z$/, 'Z').replace(/:/g, '-');
  const dirty = result.machine.dirty ? '-dirty' : '';
  const quick = result.mode === 'quick' ? '-quick' : '';
  return `${time}-${result.machine.commit}${dirty}${quick}`;
}

function contextLines(r: BenchResult): string[] {
  const m = r.machine;
  return [
    `Machine: ${m.cpuModel}, ${m.cores} cores, ${m.memoryGiB} GiB, Linux ${m.kernel}`,
    `Node ${m.node}; SQLite ${m.sqlite}; PostgreSQL ${m.postgres ?? 'not measured'}; ${m.wrk}`,
    `Commit ${m.commit}${m.dirty ? ' (with uncommitted changes)' : ''}; ${r.mode} run, ${r.startedAt} to ${r.finishedAt}`,
    m.pinned
      ? `Server processes pinned to core ${m.serverCore} (taskset), wrk (1 thread) and the harness to core ${m.clientCore}; loopback 127.0.0.1`
      : 'Not pinned (taskset or a second core missing)',
    `Load average (1/5/15 min): ${m.loadAverageAtStart.join(' / ')} at start, ${m.loadAverageAtEnd.join(' / ')} at end`,
    `Settings: ${Object.entries(r.settings)
      .map(([k, v]) => `${k}=${v}`)
      .join(', ')}`,
    `Rounds: ${r.plan.rounds} interleaved rounds of ${r.plan.seconds} s per scenario after a ${r.plan.warmupSeconds} s warm-up, ${r.plan.connections} connections; figures are medians over the rounds, ratios are medians of per-round ratios`,
  ];
}

function scenarioRow(s: ScenarioResult): string {
  const settings = Object.entries(s.settings)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
  return [
    `${s.group}: ${s.label}`,
    s.store,
    s.stored === null ? '' : fmt(s.stored),
    settings,
    fmt(s.summary.requestsPerSecond),
    s.ratioToFloor === null ? '' : `${s.ratioToFloor.toFixed(2)}×`,
    s.summary.p50Ms.toFixed(2),
    `${s.summary.p99Ms.toFixed(2)} (${s.summary.worstP99Ms.toFixed(2)})`,
    String(s.summary.errors),
    s.summary.serverRssMiB === null ? '' : s.summary.serverRssMiB.toFixed(0),
    s.summary.serverCpuUsPerRequest === null ? '' : s.summary.serverCpuUsPerRequest.toFixed(1),
    s.summary.databaseCpuUsPerRequest == null ? '' : s.summary.databaseCpuUsPerRequest.toFixed(1),
  ].join(' | ');
}

export function markdown(r: BenchResult): string {
  const lines = [
    `# Benchmark ${baseName(r)}`,
    '',
    ...contextLines(r).map((l) => `- ${l}`),
    '',
    '## Goals',
    '',
    '| figure | goal | measured | met |',
    '|---|---|---|---|',
    ...r.goals.map(
      (g) =>
        `| ${g.figure} | ${g.goal} | ${g.measured} | ${g.met === null ? 'n/a' : g.met ? 'yes' : 'NO'} |`,
    ),
    '',
    '## Scenarios',
    '',
    '| scenario | store | stored | settings | req/s | × floor | p50 ms | p99 ms (worst round) | errors | server RSS MiB | server CPU µs/req | database CPU µs/req |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...r.scenarios.map((s) => `| ${scenarioRow(s)} |`),
    '',
  ];
  for (const [store, list] of [
    ['SQLite', r.list],
    ['PostgreSQL', r.postgresList ?? null],
  ] as const) {
    if (list === null) continue;
    lines.push(
      `## List everything, ${store} (${fmt(list.stored)} messages, one streamed GET /api/messages)`,
      '',
      '| run | messages | MB | seconds | messages/s | RSS before MiB | RSS peak MiB | growth MiB | complete |',
      '|---|---|---|---|---|---|---|---|---|',
      ...list.runs.map(
        (run, i) =>
          `| ${i + 1} | ${fmt(run.messages)} | ${fmt(run.bytes / 1e6, 1)} | ${run.seconds.toFixed(2)} | ${fmt(run.messagesPerSecond)} | ${run.rssBeforeMiB.toFixed(1)} | ${run.rssPeakMiB.toFixed(1)} | ${run.rssGrowthMiB.toFixed(1)} | ${run.complete ? 'yes' : 'NO'} |`,
      ),
      '',
    );
  }
  if (r.start != null) {
    lines.push(
      '## Starting the service (SQLite; RSS of the whole process tree)',
      '',
      '| mode | command | processes | ready after ms (runs) | idle RSS MiB | RSS under GET load MiB |',
      '|---|---|---|---|---|---|',
      ...r.start.map(
        (s) =>
          `| ${s.mode} | \`${s.command}\` | ${s.processes.join(' + ')} | ${s.startMs.map((v) => v.toFixed(0)).join(', ')} | ${s.idleRssMiB.map((v) => v.toFixed(0)).join(', ')} | ${s.loadedRssMiB.map((v) => v.toFixed(0)).join(', ')} |`,
      ),
      '',
    );
  }
  if (r.events !== null) {
    lines.push(
      '## Write-to-subscriber latency (bench/event-latency.ts)',
      '',
      '```json',
      JSON.stringify(r.events, null, 2),
      '```',
      '',
    );
  }
  if (r.streams != null) {
    lines.push(
      '## Authenticated streams (bench/room-streams.ts): POST answered to the last stream that may read the room',
      '',
      '| store | streams | writes | p50 ms | p99 ms | max ms | public p99 | private p99 | from POST sent p99 | write p99 | leaked | undelivered | duplicates |',
      '|---|---|---|---|---|---|---|---|---|---|---|---|---|',
    );
    for (const [store, run] of Object.entries(r.streams)) {
      if (run === null) continue;
      lines.push(
        `| ${store} | ${run.streams} | ${run.writes} | ${run.all.p50Ms} | ${run.all.p99Ms} | ${run.all.maxMs} | ${run.publicRooms.p99Ms} | ${run.privateRoomsOnly.p99Ms} | ${run.fromPostSent.p99Ms} | ${run.write.p99Ms} | ${run.leaks} | ${run.undelivered} | ${run.duplicates} |`,
      );
    }
    lines.push('');
  }
  if (r.notes.length > 0) lines.push('## Notes', '', ...r.notes.map((n) => `- ${n}`), '');
  return lines.join('\n');
}

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Two panels of horizontal bars: each goal against its threshold, each scenario against its floor. */
export function svgChart(r: BenchResult): string {
  const width = 1100;
  const labelWidth = 420;
  const barMax = 380;
  const row = 24;
  const parts: string[] = [];
  let y = 30;
  const text = (x: number, yy: number, s: string, extra = '') =>
    parts.push(`<text x="${x}" y="${yy}" ${extra}>${escapeXml(s)}</text>`);

  text(10, y, `Benchmark ${baseName(r)}`, 'font-size="16" font-weight="bold"');
  y += 18;
  text(
    10,
    y,
    `${r.machine.cpuModel}, ${r.machine.cores} cores, Node ${r.machine.node}`,
    'fill="#555"',
  );
  y += 30;

  text(
    10,
    y,
    'Goals: measured ÷ required (the line is the goal; longer is better)',
    'font-weight="bold"',
  );
  y += 10;
  const goalTop = y;
  const scale = barMax / 2;
  for (const g of r.goals) {
    const score = g.score === null ? 0 : Math.min(g.score, 2);
    const colour = g.met === null ? '#bbb' : g.met ? '#2e7d32' : '#c62828';
    text(10, y + 16, g.figure.length > 56 ? `${g.figure.slice(0, 55)}…` : g.figure);
    parts.push(
      `<rect x="${labelWidth}" y="${y + 4}" width="${Math.max(1, score * scale).toFixed(1)}" height="${row - 8}" fill="${colour}"/>`,
    );
    text(
      labelWidth + barMax + 8,
      y + 16,
      g.met === null ? 'n/a' : `${g.met ? 'met' : 'NOT met'}: ${g.short}`,
      'fill="#333"',
    );
    y += row;
  }
  parts.push(
    `<line x1="${labelWidth + scale}" y1="${goalTop}" x2="${labelWidth + scale}" y2="${y}" stroke="#000" stroke-dasharray="4 3"/>`,
  );
  y += 30;

  text(
    10,
    y,
    'Throughput as a ratio to the floor (plain node:http on the same core, same round)',
    'font-weight="bold"',
  );
  y += 10;
  const top = y;
  const ratioScale = barMax / 1.25;
  for (const s of r.scenarios.filter((x) => x.ratioToFloor !== null)) {
    const ratio = Math.min(s.ratioToFloor!, 1.25);
    const label = `${s.group}${s.stored === null ? '' : ` ${fmt(s.stored)}`}: ${s.label}`;
    text(10, y + 16, label.length > 56 ? `${label.slice(0, 55)}…` : label);
    parts.push(
      `<rect x="${labelWidth}" y="${y + 4}" width="${Math.max(1, ratio * ratioScale).toFixed(1)}" height="${row - 8}" fill="${s.store === 'postgres' ? '#1565c0' : '#6a1b9a'}"/>`,
    );
    text(
      labelWidth + barMax + 8,
      y + 16,
      `${s.ratioToFloor!.toFixed(2)}×  ${fmt(s.summary.requestsPerSecond)}/s  p99 ${s.summary.p99Ms.toFixed(1)} ms`,
      'fill="#333"',
    );
    y += row;
  }
  parts.push(
    `<line x1="${labelWidth + ratioScale}" y1="${top}" x2="${labelWidth + ratioScale}" y2="${y}" stroke="#000" stroke-dasharray="4 3"/>`,
  );
  text(labelWidth + ratioScale - 20, top - 2, 'floor', 'font-size="11"');
  y += 20;

  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${y}" viewBox="0 0 ${width} ${y}" font-family="sans-serif" font-size="13">`,
    `<rect width="${width}" height="${y}" fill="#fff"/>`,
    ...parts,
    '</svg>',
    '',
  ].join('\n');
}

/** Writes the three files; returns their paths. */
export function writeReport(result: BenchResult, dir: string): string[] {
  const base = join(dir, baseName(result));
  const files = [`${base}.json`, `${base}.md`, `${base}.svg`];
  writeFileSync(files[0]!, `${JSON.stringify(result, null, 2)}\n`);
  writeFileSync(files[1]!, markdown(result));
  writeFileSync(files[2]!, svgChart(result));
  return files;
}
