/**
 * How hard the fault suite pushes. `FAULTS_SCALE` multiplies every bound
 * (kills, soak duration, workers...): unset or 1 is the short form that
 * `npm test` and CI run; `npm run test:faults` runs the full form.
 * `FAULTS_SEED` replays one run's random choices (kill moments, operations).
 */
import { randomInt } from 'node:crypto';

function positiveNumber(raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`FAULTS_SCALE must be > 0: ${raw}`);
  return value;
}

export const FAULTS_SCALE = positiveNumber(process.env.FAULTS_SCALE, 1);
export const FAULTS_SEED = process.env.FAULTS_SEED ?? String(randomInt(1, 2 ** 31 - 1));

/** `base` times the scale, rounded, at least `base`. */
export function scaled(base: number): number {
  return Math.max(base, Math.round(base * FAULTS_SCALE));
}

/** A small seeded generator (mulberry32), so a failing run can be replayed. */
export function seededRandom(label: string): () => number {
  let state = 0;
  for (const ch of `${FAULTS_SEED}:${label}`) state = (Math.imul(state, 31) + ch.charCodeAt(0)) | 0;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
