/**
 * What the local stack answers at its root, outside the route table (issue 37, item 1): a browser
 * pointed at the stack opens the console, and its automatic `/favicon.ico` request gets an icon
 * instead of a 404 on every page.
 */

/** A 32×32 PNG: the console's blue, a white box. Browsers read a PNG served at /favicon.ico. */
const ICON_PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAACAAAAAgCAYAAABzenr0AAAAXklEQVR42mNgwAFUk1//pyZmIAZQ21KSHEMvy7E6gt6WYzhiZDtgoCyHO2LUAYQUUAqGjwNIDdrh54DRKBh1wKgDRh0wWhANmAOGf4NktFU8KBww4F2zQdE5HajuOQCHFvhIzVBlmwAAAABJRU5ErkJggg==',
  'base64',
);

export interface FrontDoorAnswer {
  statusCode: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** The answer to a GET or HEAD of `/` or `/favicon.ico`; undefined for anything else, which the route table serves. */
export function frontDoorAnswer(method: string, rawPath: string): FrontDoorAnswer | undefined {
  if (method !== 'GET' && method !== 'HEAD') return undefined;
  // A relative Location (RFC 9110 section 10.2.2) keeps whichever host and port the browser used.
  if (rawPath === '/') return { statusCode: 302, headers: { Location: '/console', 'Cache-Control': 'no-store' }, body: Buffer.alloc(0) };
  if (rawPath === '/favicon.ico') {
    return { statusCode: 200, headers: { 'Content-Type': 'image/png', 'Cache-Control': 'public, max-age=86400' }, body: ICON_PNG };
  }
  return undefined;
}
