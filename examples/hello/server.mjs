// The example app for the process runtime, which runs a command rather than an image: the same
// page as the image's (www/index.html), on the port the service gives it in PORT.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const page = readFileSync(new URL('./www/index.html', import.meta.url));
const port = Number(process.env.PORT ?? 8080);
createServer((request, response) => {
  console.log(`${request.method} ${request.url}`);
  response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page);
}).listen(port, () => console.log(`serving www/ on port ${port}`));
