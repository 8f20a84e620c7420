/**
 * Database CPU spent for one service process: the PostgreSQL backends whose
 * client sockets belong to that process (its pool and its LISTEN
 * connection), found by matching the process's socket inodes to local ports
 * (/proc/<pid>/fd, /proc/net/tcp*) and those ports to pg_stat_activity. Other
 * work on the same server (other schemas, other test runs) is not counted.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import type pg from 'pg';
import { cpuSecondsOf } from './server-process.ts';

const PG_PORT_HEX = (5432).toString(16).toUpperCase().padStart(4, '0');

/** Local ports of `pid`'s TCP connections to port 5432. */
function clientPortsOf(pid: number): Set<number> {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (match !== null) inodes.add(match[1]!);
    } catch {
      // The descriptor closed meanwhile.
    }
  }
  const ports = new Set<number>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields.length < 10) continue;
      const [, local, remote] = fields;
      if (!remote!.endsWith(`:${PG_PORT_HEX}`) || !inodes.has(fields[9]!)) continue;
      ports.add(parseInt(local!.split(':')[1]!, 16));
    }
  }
  return ports;
}

/** CPU seconds used so far by the backends serving `servicePid`. */
export async function databaseCpuSeconds(admin: pg.Client, servicePid: number): Promise<number> {
  const ports = clientPortsOf(servicePid);
  const { rows } = await admin.query<{ pid: number; client_port: number | null }>(
    'SELECT pid, client_port FROM pg_stat_activity WHERE client_port IS NOT NULL',
  );
  let total = 0;
  for (const row of rows) {
    if (row.client_port === null || !ports.has(row.client_port)) continue;
    const seconds = cpuSecondsOf(row.pid);
    if (!Number.isNaN(seconds)) total += seconds;
  }
  return total;
}
