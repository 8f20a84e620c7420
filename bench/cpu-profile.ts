/**
 * Profiles the service's hot paths: starts the production build with
 * `node --cpu-prof` pinned to the server core, drives one scenario with wrk
 * (GET by id, POST create, the history page, the page around a message, or a history page's
 * reaction summaries over 200,000 seeded reactions), stops the server so the
 * profile is written, and prints where the CPU time went: the top functions
 * by self time and the time spent under each package or file.
 *
 * Usage: node --import tsx bench/cpu-profile.ts <get|create|history|around|summaries|healthz|user-rooms> [seconds] [stored]
 * The .cpuprofile files stay in bench/results/tmp/profiles/ (open them in Chrome DevTools).
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, detectCores, pinned, SERVICE_SETTINGS, startServer } from './server-process.ts';
import { readIds, sqlitePages, subset, SUMMARY_PAGES } from './conversations.ts';
import { seedSqlite } from './seed-data.ts';
import { seedSqliteReactions } from './seed-reactions.ts';
import { USER_ROOMS_SUBJECT, userRoomsLayout, writeRoomsSqlite } from './seed-rooms.ts';
import { runWrk, requestsPerSecond } from './wrk-runner.ts';
import { cpus } from 'node:os';

const ROOT = join(import.meta.dirname, '..');
const TMP = join(ROOT, 'bench', 'results', 'tmp');
const OUT = join(TMP, 'profiles');

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const scenarios = {
  get: { path: '/', script: 'get-by-id.lua', ids: true },
  history: { path: '/', script: 'history.lua', ids: true },
  around: { path: '/', script: 'around.lua', ids: true },
  summaries: { path: '/', script: 'summaries.lua', ids: true },
  create: { path: '/api/messages', script: 'create.lua', ids: false },
  healthz: { path: '/healthz', script: undefined, ids: false },
  'user-rooms': { path: `/api/users/${USER_ROOMS_SUBJECT}/rooms`, script: undefined, ids: false },
} as const;

function short(url: string): string {
  return url
    .replace(/^file:\/\//, '')
    .replace(/.*node_modules\//, '')
    .replace(`${ROOT}/`, '');
}

function owner(url: string): string {
  const path = short(url);
  if (url.includes('node_modules/')) return path.replace(/^((@[^/]+\/)?[^/]+).*/, '$1');
  if (path.startsWith('dist/')) return path;
  if (url.startsWith('node:')) return url;
  return url === '' ? '(native)' : path;
}

/** Prints the top self-time functions and the inclusive time per package/file. */
export function summarize(profile: Profile, top = 30): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const selfTime = new Map<number, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    selfTime.set(id, (selfTime.get(id) ?? 0) + dt);
    total += dt;
  });
  const idle = [...selfTime]
    .filter(([id]) => byId.get(id)!.callFrame.functionName === '(idle)')
    .reduce((s, [, t]) => s + t, 0);
  const busy = total - idle;
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  for (const [id, t] of selfTime) {
    const frame = byId.get(id)!.callFrame;
    if (frame.functionName === '(idle)') continue;
    const key = `${frame.functionName || '(anonymous)'} ${short(frame.url)}:${frame.lineNumber + 1}`;
    self.set(key, (self.get(key) ?? 0) + t);
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const o = owner(byId.get(cur)!.callFrame.url);
      if (!seen.has(o)) {
        seen.add(o);
        inclusive.set(o, (inclusive.get(o) ?? 0) + t);
      }
    }
  }
  const pct = (t: number) => `${((t / busy) * 100).toFixed(1).padStart(5)}%`;
  const lines = [`busy ${(busy / 1e6).toFixed(2)} s of ${(total / 1e6).toFixed(2)} s profiled`];
  lines.push('', `top ${top} functions by self time (share of busy time):`);
  for (const [k, t] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    lines.push(`${pct(t)}  ${k}`);
  }
  lines.push('', 'inclusive time by package / file:');
  for (const [k, t] of [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    if (k !== '(native)') lines.push(`${pct(t)}  ${k}`);
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const name = (process.argv[2] ?? 'get') as keyof typeof scenarios;
  const scenario = scenarios[name];
  if (scenario === undefined) throw new Error(`unknown scenario ${name}`);
  const seconds = Number(process.argv[3] ?? '8');
  const stored = Number(process.argv[4] ?? '100000');
  mkdirSync(OUT, { recursive: true });
  for (const f of readdirSync(OUT)) rmSync(join(OUT, f));
  const cores = detectCores(cpus().length);
  const rooms = name === 'user-rooms';
  const db = join(TMP, `profile-${rooms ? 'rooms-' : ''}${stored}.db`);
  const ids = join(TMP, `ids-profile-${stored}.txt`);
  if (rooms) {
    // The bench's layout: 1,000 rooms, the subject in 200, markers of every kind.
    const layout = userRoomsLayout();
    await seedSqlite(db, stored, ids, layout.fill);
    writeRoomsSqlite(db, layout.layout());
  } else {
    await seedSqlite(db, stored, ids);
  }
  let args = ids;
  if (name === 'summaries') {
    // As the conversations group drives it: 200,000 reactions, stored pages' 50 ids each.
    seedSqliteReactions(db, 200_000);
    args = join(TMP, `summaries-profile-${stored}.txt`);
    const pages = sqlitePages(db, subset(readIds(ids), SUMMARY_PAGES));
    writeFileSync(args, `${pages.join('\n')}\n`);
  }
  const port = await freePort();
  const server = await startServer({
    name: 'profiled',
    command: pinned(cores, cores.server, [
      process.execPath,
      '--cpu-prof',
      `--cpu-prof-dir=${OUT}`,
      'dist/server.js',
    ]),
    env: { ...SERVICE_SETTINGS, PORT: String(port), DATABASE_URL: `sqlite:${db}` },
    port,
    readyPath: '/readyz',
    cwd: ROOT,
  });
  const dirs = { lua: join(ROOT, 'bench', 'lua'), tmp: TMP };
  const run = {
    url: server.baseUrl + scenario.path,
    // As the bench drives each: the room list at 10 clients, the rest at 50.
    connections: rooms ? 10 : 50,
    ...(scenario.script === undefined ? {} : { script: scenario.script }),
    ...(scenario.ids ? { args: [args] } : {}),
  };
  await runWrk(cores, { ...run, seconds: 2 }, dirs);
  const result = await runWrk(cores, { ...run, seconds }, dirs);
  await server.stop();
  const file = readdirSync(OUT).find((f) => f.endsWith('.cpuprofile'));
  if (file === undefined) throw new Error('no profile was written');
  process.stdout.write(
    `${name}: ${Math.round(requestsPerSecond(result))} req/s under the profiler (${join(OUT, file)})\n`,
  );
  const profile = JSON.parse(readFileSync(join(OUT, file), 'utf8')) as Profile;
  process.stdout.write(`${summarize(profile, Number(process.env.TOP ?? 30))}\n`);
}

await main();
