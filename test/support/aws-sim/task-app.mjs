// The process a simulated ECS task runs: an HTTP server on the task's own loopback address
// (SIM_HOST) and the container's port (PORT), whose behaviour its environment decides, so a
// probe of the task is a real TCP connect or GET. Plain JavaScript: it runs on Node directly.
import { createServer } from 'node:http';

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
      else response.writeHead(200, { 'content-type': 'text/plain' }).end(body);
    });
    server.listen(port, host, () => console.log(`listening on ${host}:${port}`));
  }, listenAfterMs);
}
