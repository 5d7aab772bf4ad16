/**
 * A container's hostname, an RFC 1123 label: 1..63 lowercase letters, digits and inner hyphens.
 * In a module of its own so that the functions that only check one carry no zod.
 */
export const HOSTNAME_PATTERN = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
