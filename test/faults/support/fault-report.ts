/**
 * The figures a fault test measured: printed as test diagnostics and kept in
 * test-output/faults-figures.jsonl, so a run's numbers can be quoted.
 */
import { appendFileSync, mkdirSync } from 'node:fs';
import type { TestContext } from 'node:test';
import { FAULTS_SCALE, FAULTS_SEED } from './fault-scale.ts';

export function reportFigures(t: TestContext, test: string, figures: object): void {
  const entry = {
    test,
    scale: FAULTS_SCALE,
    seed: FAULTS_SEED,
    at: new Date().toISOString(),
    ...figures,
  };
  t.diagnostic(JSON.stringify(entry));
  mkdirSync('test-output', { recursive: true });
  appendFileSync('test-output/faults-figures.jsonl', `${JSON.stringify(entry)}\n`);
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
