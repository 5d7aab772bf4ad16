// The default local container: a small HTTP server on a loopback port that answers with its
// hostname, writes `ready` once it listens and a heartbeat file every second, and exits
// cleanly on SIGTERM. The local runtime starts one per container, in the container's directory.
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';

const hostname = process.env.CONTAINER_HOSTNAME ?? 'container';
const server = createServer((_request, response) => {
  response.setHeader('Content-Type', 'text/plain; charset=utf-8');
  response.end(`Hello from ${hostname}\n`);
});

server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  writeFileSync('ready', JSON.stringify({ hostname, port: server.address().port, pid: process.pid }));
});

const beat = () => writeFileSync('heartbeat', new Date().toISOString());
beat();
setInterval(beat, 1000);

process.on('SIGTERM', () => {
  server.close();
  process.exit(0);
});
