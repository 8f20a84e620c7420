// Reads one whole `GET /api/messages` (the streamed list) as fast as the server sends it,
// counting messages without parsing them, and prints one JSON line with the figures.
// Usage: node bench/list-client.mjs <url>
import { Buffer } from 'node:buffer';
import { request } from 'node:http';

const url = process.argv[2];
const NEEDLE = Buffer.from('{"id":"');

const started = process.hrtime.bigint();
let firstByteAt = 0n;
let bytes = 0;
let messages = 0;
let tail = Buffer.alloc(0);
let lastByte = '';

const req = request(url, (res) => {
  res.on('data', (chunk) => {
    if (firstByteAt === 0n) firstByteAt = process.hrtime.bigint();
    bytes += chunk.length;
    // Count occurrences across chunk boundaries: keep the last few bytes of the previous chunk.
    const buffer = tail.length === 0 ? chunk : Buffer.concat([tail, chunk]);
    let at = buffer.indexOf(NEEDLE);
    while (at !== -1) {
      messages++;
      at = buffer.indexOf(NEEDLE, at + NEEDLE.length);
    }
    tail = buffer.subarray(Math.max(0, buffer.length - (NEEDLE.length - 1)));
    lastByte = String.fromCharCode(chunk[chunk.length - 1]);
  });
  res.on('end', () => {
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    process.stdout.write(
      `${JSON.stringify({
        status: res.statusCode,
        bytes,
        messages,
        seconds,
        firstByteSeconds: Number(firstByteAt - started) / 1e9,
        complete: lastByte === ']',
      })}\n`,
    );
  });
  res.on('error', (error) => {
    process.stderr.write(`list stream failed: ${error.message}\n`);
    process.exit(1);
  });
});
req.on('error', (error) => {
  process.stderr.write(`list request failed: ${error.message}\n`);
  process.exit(1);
});
req.end();
