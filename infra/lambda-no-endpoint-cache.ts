/**
 * What Lambda bundles get in place of `@aws-sdk/endpoint-cache` (see infra/bundling.ts). The
 * DynamoDB client builds one for endpoint discovery when it is created, but none of its commands
 * in this SDK version attaches the endpoint-discovery plugin (no command module imports
 * `getEndpointDiscoveryPlugin`), so the cache is never read; the real one brings an LRU from
 * `mnemonist` (about 7 KiB minified). This one remembers nothing: were it ever asked, every
 * lookup misses and the client uses the regional endpoint, which DynamoDB serves.
 */
export class EndpointCache {
  getEndpoint(_key: string): string | undefined {
    return undefined;
  }
  get(_key: string): undefined {
    return undefined;
  }
  set(_key: string, _endpoints: unknown[]): void {}
  delete(_key: string): void {}
  has(_key: string): boolean {
    return false;
  }
  clear(): void {}
}
