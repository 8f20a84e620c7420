/**
 * Samples a process's resident memory and open file descriptors from /proc,
 * at a fixed interval, for the soak test.
 */
import { readdirSync, readFileSync } from 'node:fs';

export interface Sample {
  /** Milliseconds since sampling started. */
  readonly at: number;
  readonly rssKb: number;
  readonly fds: number;
}

export function sampleProcess(pid: number): Omit<Sample, 'at'> {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const rss = /^VmRSS:\s+(\d+) kB/m.exec(status);
  return { rssKb: Number(rss?.[1] ?? NaN), fds: readdirSync(`/proc/${pid}/fd`).length };
}

/**
 * Connections to a local listening port that are established (from the
 * kernel's table): clients keep idle keep-alive connections open for a while,
 * and each holds one descriptor in the server, which is no leak.
 */
export function establishedConnections(port: number): number {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  let count = 0;
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      // fields: sl local_address rem_address st ...; ESTABLISHED is state 01.
      if (fields[1]?.endsWith(`:${hexPort}`) && fields[3] === '01') count += 1;
    }
  }
  return count;
}

export class ProcessSampler {
  readonly samples: Sample[] = [];
  readonly #timer: NodeJS.Timeout;

  constructor(pid: number, everyMs: number) {
    const started = Date.now();
    const take = () => {
      try {
        this.samples.push({ at: Date.now() - started, ...sampleProcess(pid) });
      } catch {
        // the process is gone: the test notices by other means
      }
    };
    take();
    this.#timer = setInterval(take, everyMs);
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  /** The median RSS (kB) of the samples taken in [from, to) ms. */
  medianRssKb(from: number, to: number): number {
    const values = this.samples
      .filter((s) => s.at >= from && s.at < to)
      .map((s) => s.rssKb)
      .sort((a, b) => a - b);
    return values[Math.floor(values.length / 2)] ?? NaN;
  }
}
