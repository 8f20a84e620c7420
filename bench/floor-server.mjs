// The floor: what plain node:http does on this core, answering a constant JSON body.
// Every service figure is also reported as a ratio to this, measured in the same run.
import { Buffer } from 'node:buffer';
import { createServer } from 'node:http';

const BODY = JSON.stringify({ status: 'ok' });
const HEADERS = {
  'content-type': 'application/json; charset=utf-8',
  'content-length': Buffer.byteLength(BODY),
};

const server = createServer((_req, res) => {
  res.writeHead(200, HEADERS);
  res.end(BODY);
});
server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`${JSON.stringify({ listening: address.port })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
process.on('SIGINT', () => server.close(() => process.exit(0)));
