/** The latency benches' event streams (numbered markers found in their raw bytes) and writes. */
import http from 'node:http';
import net from 'node:net';
import { performance } from 'node:perf_hooks';

/**
 * Calls `onNumber` for every `mark` followed by digits in `data` (a stream's
 * bytes, the previous chunk's tail first), and returns what to keep for the
 * next chunk: only what may hold the start of a marker not seen whole yet
 * (never one already reported).
 */
export function scanMarkers(data: Buffer, mark: Buffer, onNumber: (n: number) => void) {
  let from = 0;
  for (;;) {
    const found = data.indexOf(mark, from);
    if (found === -1) break;
    const digits = found + mark.length;
    let end = digits;
    while (end < data.length && data[end]! >= 0x30 && data[end]! <= 0x39) end++;
    if (end === data.length) {
      from = found;
      break;
    }
    onNumber(Number(data.subarray(digits, end).toString('latin1')));
    from = end;
  }
  return Buffer.from(data.subarray(Math.max(from, data.length - (mark.length + 20))));
}

/**
 * Opens `GET <url>` as an event stream on a raw socket (parsing each event of
 * many streams in one process would cost more than what is measured) and
 * reports every marker `mark` + digits with the time its bytes arrived.
 * Resolves once the answer is a 200; rejects with the answer's first bytes otherwise.
 */
export function markedStream(
  url: string,
  headers: Readonly<Record<string, string>>,
  mark: Buffer,
  onArrival: (n: number, at: number) => void,
): Promise<net.Socket> {
  const { hostname, port, pathname, search } = new URL(url);
  const extra = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: hostname, port: Number(port) });
    socket.setNoDelay(true);
    let tail = Buffer.alloc(0);
    let opened = false;
    socket.once('error', reject);
    socket.on('connect', () => {
      socket.write(
        `GET ${pathname}${search} HTTP/1.1\r\nHost: ${hostname}:${port}\r\n` +
          `Accept: text/event-stream\r\n${extra.join('')}\r\n`,
      );
    });
    socket.on('data', (chunk: Buffer) => {
      const at = performance.now();
      const data = tail.length === 0 ? chunk : Buffer.concat([tail, chunk]);
      if (!opened) {
        if (!data.subarray(0, 16).toString('latin1').startsWith('HTTP/1.1 200')) {
          reject(new Error(`GET ${url}: ${data.subarray(0, 200).toString('latin1')}`));
          socket.destroy();
          return;
        }
        opened = true;
        resolve(socket);
      }
      tail = scanMarkers(data, mark, (n) => onArrival(n, at));
    });
  });
}

/** POST /api/messages with `body` (JSON) and `headers`; resolves on a 201, rejects otherwise. */
export function postMessage(
  baseUrl: string,
  agent: http.Agent,
  body: unknown,
  headers: Readonly<Record<string, string>> = {},
): Promise<void> {
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const request = http.request(
      `${baseUrl}/api/messages`,
      {
        method: 'POST',
        agent,
        headers: {
          ...headers,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(text),
        },
      },
      (response) => {
        response.resume();
        response.on('end', () =>
          response.statusCode === 201
            ? resolve()
            : reject(new Error(`POST ${text}: ${response.statusCode}`)),
        );
      },
    );
    request.on('error', reject);
    request.end(text);
  });
}
