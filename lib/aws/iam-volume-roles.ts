import { createHash, createHmac } from 'node:crypto';
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { SignatureV4 } from '@smithy/signature-v4';
import type { Checksum, HttpRequest, SourceData } from '@smithy/types';
import { ServiceBusyError } from '../errors.js';
import type { VolumeTaskRoles } from './efs-volume-backend.js';

/**
 * Volume roles through IAM's Query API (https://docs.aws.amazon.com/IAM/latest/APIReference/API_CreateRole.html,
 * PutRolePolicy, GetRole, DeleteRolePolicy, DeleteRole), signed with SigV4 by the SDK's own
 * signer. A stand-in for @aws-sdk/client-iam, which this repository does not depend on yet: five
 * calls, each a form POST answered in XML. Every role is created with the deployment's
 * permissions boundary, which the control plane's iam:CreateRole permission requires
 * (infra/constructs/workload-volumes.ts), so a role it makes can never hold more than EFS client
 * access to the volumes' file system.
 */
export class IamVolumeRoles implements VolumeTaskRoles {
  private readonly signer = new SignatureV4({
    service: 'iam',
    // IAM is global; its endpoint signs in us-east-1 (https://docs.aws.amazon.com/general/latest/gr/iam-service.html).
    region: 'us-east-1',
    credentials: defaultProvider(),
    sha256: NodeSha256,
  });

  constructor(
    private readonly permissionsBoundaryArn: string,
    private readonly endpoint: string = process.env.AWS_ENDPOINT_URL_IAM ?? 'https://iam.amazonaws.com',
  ) {}

  async ensure(role: { path: string; name: string; trustPolicy: object; policyName: string; policy: object }): Promise<string> {
    let arn: string;
    try {
      const created = await this.call('CreateRole', {
        RoleName: role.name,
        Path: role.path,
        AssumeRolePolicyDocument: JSON.stringify(role.trustPolicy),
        PermissionsBoundary: this.permissionsBoundaryArn,
        Description: 'Mounts one volume through its own EFS access point',
      });
      arn = tagText(created, 'Arn')!;
    } catch (error) {
      // A retried create finds the role the first attempt made.
      if (!(error instanceof IamError && error.code === 'EntityAlreadyExists')) throw error;
      arn = tagText(await this.call('GetRole', { RoleName: role.name }), 'Arn')!;
    }
    await this.call('PutRolePolicy', { RoleName: role.name, PolicyName: role.policyName, PolicyDocument: JSON.stringify(role.policy) });
    return arn;
  }

  async remove(role: { name: string; policyName: string }): Promise<void> {
    for (const [action, parameters] of [
      ['DeleteRolePolicy', { RoleName: role.name, PolicyName: role.policyName }],
      ['DeleteRole', { RoleName: role.name }],
    ] as const) {
      try {
        await this.call(action, parameters);
      } catch (error) {
        if (!(error instanceof IamError && error.code === 'NoSuchEntity')) throw error;
      }
    }
  }

  private async call(action: string, parameters: Record<string, string>): Promise<string> {
    const url = new URL(this.endpoint);
    const body = new URLSearchParams({ Action: action, Version: '2010-05-08', ...parameters }).toString();
    const request: HttpRequest = {
      method: 'POST',
      protocol: url.protocol,
      hostname: url.hostname,
      ...(url.port ? { port: Number(url.port) } : {}),
      path: url.pathname,
      query: {},
      headers: { host: url.host, 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' },
      body,
    };
    const signed = await this.signer.sign(request);
    const response = await fetch(url, { method: 'POST', headers: signed.headers, body });
    const text = await response.text();
    if (response.ok) return text;
    const code = tagText(text, 'Code') ?? `HTTP ${response.status}`;
    if (code === 'Throttling') throw new ServiceBusyError('IAM is busy (it throttled this request); try again shortly', 5);
    throw new IamError(code, tagText(text, 'Message') ?? '');
  }
}

export class IamError extends Error {
  override readonly name = 'IamError';
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(`${code}: ${message}`);
  }
}

const tagText = (xml: string, tag: string): string | undefined => new RegExp(`<${tag}>([^<]*)</${tag}>`).exec(xml)?.[1];

/** SHA-256 (and HMAC-SHA-256 with a key) from node:crypto, in the shape the SigV4 signer takes. */
class NodeSha256 implements Checksum {
  private hash: ReturnType<typeof createHash> | ReturnType<typeof createHmac>;
  private readonly secret: Buffer | undefined;
  constructor(secret?: SourceData) {
    this.secret =
      secret === undefined
        ? undefined
        : typeof secret === 'string'
          ? Buffer.from(secret)
          : Buffer.from(
              ArrayBuffer.isView(secret) ? new Uint8Array(secret.buffer, secret.byteOffset, secret.byteLength) : new Uint8Array(secret),
            );
    this.hash = this.secret ? createHmac('sha256', this.secret) : createHash('sha256');
  }
  update(data: Uint8Array | string): void {
    this.hash.update(data);
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.hash.digest());
  }
  reset(): void {
    this.hash = this.secret ? createHmac('sha256', this.secret) : createHash('sha256');
  }
}
