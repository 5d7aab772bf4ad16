/** In a module of its own: every OAuth function reads a client_id, only the authorize path fetches documents (and carries the name rules). */
const MAX_CLIENT_ID_URL_LENGTH = 1024;

/**
 * Whether a `client_id` is a client metadata document's URL (draft-ietf-oauth-client-id-metadata-document-02
 * section 3): https, a path other than `/`, no dot segments, no fragment, no credentials.
 */
export function isClientIdUrl(value: string): boolean {
  if (value.length > MAX_CLIENT_ID_URL_LENGTH || !value.startsWith('https://') || !URL.canParse(value)) return false;
  const url = new URL(value);
  const rawPath =
    value
      .slice('https://'.length)
      .replace(/^[^/?#]*/, '')
      .split(/[?#]/)[0] ?? '';
  if (url.username || url.password || value.includes('#')) return false;
  if (rawPath === '' || rawPath === '/' || rawPath.split('/').some((segment) => segment === '.' || segment === '..')) return false;
  return /^[\x21-\x7e]+$/.test(value);
}
