// The process a simulated ECS task runs: an HTTP server on the task's own loopback address
// (SIM_HOST) and the container's port (PORT), whose behaviour its environment decides, so a
// probe of the task is a real TCP connect or GET. Plain JavaScript: it runs on Node directly.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { dirname, join, normalize } from 'node:path';

const env = process.env;
const number = (name) => (env[name] === undefined || env[name] === '' ? undefined : Number(env[name]));
const host = env.SIM_HOST ?? '127.0.0.1';
const port = Number(env.PORT ?? 8080);
const listenAfterMs = number('SIM_LISTEN_AFTER_MS') ?? 0;
const neverListen = env.SIM_NEVER_LISTEN === 'true';
const exitAfterMs = number('SIM_EXIT_AFTER_MS');
const exitCode = number('SIM_EXIT_CODE') ?? 1;
const healthPath = env.SIM_HEALTH_PATH ?? '/healthz';
const healthStatus = number('SIM_HEALTH_STATUS') ?? 200;
const body = env.SIM_BODY ?? `version=${env.VERSION ?? 'none'}`;
// The task's mounts (container path → where the simulator keeps the bytes): `PUT /files/data/a.txt`
// writes `a.txt` on the volume mounted at /data, `GET` reads it back (404 when it is not there), `DELETE` removes it.
const mounts = JSON.parse(env.SIM_MOUNTS ?? '{}');

function files(request, response) {
  const wanted = normalize(decodeURIComponent(request.url.slice('/files'.length)));
  const mount = Object.keys(mounts).find((path) => wanted.startsWith(`${path}/`));
  if (!mount) return response.writeHead(404).end('no volume is mounted there');
  const local = join(mounts[mount], wanted.slice(mount.length));
  if (request.method === 'PUT') {
    const chunks = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => {
      mkdirSync(dirname(local), { recursive: true });
      writeFileSync(local, Buffer.concat(chunks));
      response.writeHead(201).end('written');
    });
    return;
  }
  if (request.method === 'DELETE') {
    rmSync(local, { force: true });
    return response.writeHead(204).end();
  }
  try {
    response.writeHead(200, { 'content-type': 'text/plain' }).end(readFileSync(local));
  } catch {
    response.writeHead(404).end('not found');
  }
}

console.log(`task starting on ${host}:${port}`);
let server;
process.on('SIGTERM', () => {
  console.log('SIGTERM: exiting');
  server?.close();
  process.exit(0);
});
if (exitAfterMs !== undefined) {
  setTimeout(() => {
    console.log(`exiting with code ${exitCode}`);
    process.exit(exitCode);
  }, exitAfterMs);
}
if (neverListen) {
  setInterval(() => {}, 1 << 30);
} else {
  setTimeout(() => {
    server = createServer((request, response) => {
      if (request.url === healthPath) response.writeHead(healthStatus).end(String(healthStatus));
      else if (request.url.startsWith('/files/')) files(request, response);
      else if (request.url === '/print' && request.method === 'POST') {
        // What the app prints on its own stdout (its logs): the body, as one line.
        const chunks = [];
        request.on('data', (chunk) => chunks.push(chunk));
        request.on('end', () => {
          process.stdout.write(`${Buffer.concat(chunks).toString()}\n`);
          response.writeHead(204).end();
        });
      }
      else response.writeHead(200, { 'content-type': 'text/plain' }).end(body);
    });
    server.listen(port, host, () => console.log(`listening on ${host}:${port}`));
  }, listenAfterMs);
}
