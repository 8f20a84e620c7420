/**
 * The cap on open connections (MAX_CONNECTIONS), kept below the process's
 * open-file limit. Every connection is a descriptor, and so are the listener,
 * the store's files and connections, Redis, static files and Node's own: a cap
 * at or above the limit never triggers, and the descriptors run out first
 * (accepts and file opens fail, requests fail without an answer). Past the
 * cap Node closes new connections at once; that is logged, at most once per
 * interval, so a flood does not flood the log.
 */
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';

/** Descriptors kept for everything that is not a client connection (besides the PostgreSQL pool). */
export const DESCRIPTOR_RESERVE = 128;
/** At most one "connection refused" line per this many milliseconds. */
export const DROP_LOG_INTERVAL_MS = 10_000;

export interface ConnectionCap {
  readonly cap: number;
  /** True when the requested cap was lowered to fit the open-file limit. */
  readonly clamped: boolean;
}

/** The cap to apply: the requested one, or the open-file limit less the reserve if that is lower (at least 1). */
export function connectionCap(
  requested: number,
  openFileLimit: number | null,
  reserve: number,
): ConnectionCap {
  if (openFileLimit === null) return { cap: requested, clamped: false };
  const ceiling = Math.max(1, openFileLimit - reserve);
  return requested > ceiling ? { cap: ceiling, clamped: true } : { cap: requested, clamped: false };
}

/**
 * The soft RLIMIT_NOFILE (`ulimit -n`). Node has no API for it: Linux shows it
 * in /proc/self/limits. Null where that cannot be read, or when unlimited.
 */
export function openFileLimit(limitsFile = '/proc/self/limits'): number | null {
  let text: string;
  try {
    text = readFileSync(limitsFile, 'utf8');
  } catch {
    return null;
  }
  const soft = /^Max open files\s+(\S+)/m.exec(text)?.[1];
  return soft !== undefined && /^\d+$/.test(soft) ? Number(soft) : null;
}

export interface ConnectionCapOptions {
  /** MAX_CONNECTIONS. */
  readonly requested: number;
  readonly openFileLimit: number | null;
  readonly reserve: number;
}

export function applyConnectionCap(app: FastifyInstance, options: ConnectionCapOptions): void {
  const { cap, clamped } = connectionCap(options.requested, options.openFileLimit, options.reserve);
  if (clamped) {
    app.log.warn(
      { requested: options.requested, openFileLimit: options.openFileLimit, maxConnections: cap },
      'MAX_CONNECTIONS lowered below the open-file limit (ulimit -n), keeping descriptors for the rest',
    );
  }
  // Past the cap Node closes new connections at once instead of queueing them.
  app.server.maxConnections = cap;
  let lastLogAt = Number.NEGATIVE_INFINITY;
  let refused = 0;
  app.server.on('drop', () => {
    refused += 1;
    const now = Date.now();
    if (now - lastLogAt < DROP_LOG_INTERVAL_MS) return;
    app.log.warn(
      { maxConnections: cap, refused },
      'connection refused: MAX_CONNECTIONS reached (count since the last such line)',
    );
    lastLogAt = now;
    refused = 0;
  });
}
