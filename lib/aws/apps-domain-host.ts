/** One label under the apps domain, that label a valid hostname (RFC 1123), as the Caddyfile's matcher admits. */
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** The container hostname a `Host` names under the apps domain (`{hostname}.{APPS_DOMAIN}`, any case, any port), or undefined. */
export function hostnameUnder(host: string | undefined, appsDomain: string): string | undefined {
  if (!host) return undefined;
  const name = host
    .toLowerCase()
    .replace(/:\d{1,5}$/, '')
    .replace(/\.$/, '');
  const suffix = `.${appsDomain.toLowerCase()}`;
  if (!name.endsWith(suffix)) return undefined;
  const label = name.slice(0, -suffix.length);
  return LABEL.test(label) ? label : undefined;
}
