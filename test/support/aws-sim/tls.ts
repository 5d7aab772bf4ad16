import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A throwaway self-signed certificate for 127.0.0.1, made with this machine's openssl, or none
 * when it has no openssl. Made once per test process: RSA, since busybox 1.35's TLS offers only
 * RSA and ECDSA suites (AES-CBC and AES-GCM) and names no signature algorithms.
 */
let made: { key: Buffer; cert: Buffer } | null | undefined;

export function selfSignedCertificate(): { key: Buffer; cert: Buffer } | undefined {
  if (made !== undefined) return made ?? undefined;
  const directory = mkdtempSync(join(tmpdir(), 'aws-sim-tls-'));
  try {
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=127.0.0.1', '-keyout', 'key.pem', '-out', 'cert.pem'],
      { cwd: directory, stdio: 'ignore' },
    );
    made = { key: readFileSync(join(directory, 'key.pem')), cert: readFileSync(join(directory, 'cert.pem')) };
  } catch {
    made = null;
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
  return made ?? undefined;
}
