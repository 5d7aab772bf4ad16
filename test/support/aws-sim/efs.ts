import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AwsError, type FaultCounts } from './faults.js';

const ACCOUNT = '123456789012';
const REGION = 'us-east-1';

/**
 * "A file system can have a maximum of 10,000 access points unless you request an increase."
 * (https://docs.aws.amazon.com/efs/latest/ug/create-access-point.html); past it CreateAccessPoint
 * answers AccessPointLimitExceeded (https://docs.aws.amazon.com/efs/latest/ug/API_CreateAccessPoint.html).
 */
export const ACCESS_POINTS_PER_FILE_SYSTEM = 10_000;

export interface EfsSimOptions {
  /** Access points one file system holds (EFS: ACCESS_POINTS_PER_FILE_SYSTEM). */
  accessPointLimit?: number;
  /** How long a new access point stays `creating` before it is `available`, ms. */
  creatingMs?: number;
}

export interface SimAccessPoint {
  AccessPointId: string;
  AccessPointArn: string;
  ClientToken: string;
  FileSystemId: string;
  PosixUser?: { Uid: number; Gid: number };
  RootDirectory?: { Path?: string; CreationInfo?: { OwnerUid: number; OwnerGid: number; Permissions: string } };
  Tags: Array<{ Key: string; Value: string }>;
  LifeCycleState: 'creating' | 'available' | 'deleting' | 'deleted';
  OwnerId: string;
  availableAt: number;
}

/**
 * EFS's control plane as the volume backend calls it (lib/aws/efs-volume-backend.ts), restJson1
 * under `/2015-02-01/`: CreateAccessPoint, DescribeAccessPoints, DeleteAccessPoint
 * (https://docs.aws.amazon.com/efs/latest/ug/API_CreateAccessPoint.html and its neighbours). One
 * file system exists, as the stack makes it. A client token names one request: the same token
 * with the same request answers the same access point, with another request AccessPointAlreadyExists.
 * Directories an access point creates stay when it is deleted, as on EFS; `directories` keeps them.
 */
export class EfsSim {
  readonly fileSystemId = 'fs-0123456789abcdef0';
  readonly fileSystemArn = `arn:aws:elasticfilesystem:${REGION}:${ACCOUNT}:file-system/${this.fileSystemId}`;
  readonly accessPoints = new Map<string, SimAccessPoint>();
  /** Root directories created on the file system (path → owner uid and mode), kept after their access point is deleted. */
  readonly directories = new Map<string, { uid: number; gid: number; permissions: string }>();
  /** The file system's bytes: a directory of this machine, under which each root directory is made. */
  readonly root = mkdtempSync(join(tmpdir(), 'efs-sim-'));
  readonly calls = new Map<string, number>();

  constructor(
    private readonly options: EfsSimOptions,
    private readonly faults: FaultCounts,
  ) {}

  handle(method: string, path: string, query: URLSearchParams, body: string): { status: number; output: unknown } {
    if (method === 'POST' && path === '/2015-02-01/access-points') return { status: 200, output: this.create(JSON.parse(body || '{}')) };
    if (method === 'GET' && path === '/2015-02-01/access-points') return { status: 200, output: this.describe(query) };
    const deleted = /^\/2015-02-01\/access-points\/([^/]+)$/.exec(path);
    if (method === 'DELETE' && deleted) {
      this.delete(decodeURIComponent(deleted[1]!));
      return { status: 204, output: undefined };
    }
    throw new AwsError('UnknownOperationException', `The simulator does not model ${method} ${path}`);
  }

  private count(action: string): void {
    this.calls.set(action, (this.calls.get(action) ?? 0) + 1);
  }

  private create(input: Record<string, any>): unknown {
    this.count('CreateAccessPoint');
    if (input.FileSystemId !== this.fileSystemId)
      throw new AwsError('FileSystemNotFound', `File system '${input.FileSystemId}' does not exist.`, 404);
    const token = String(input.ClientToken ?? '');
    const earlier = [...this.accessPoints.values()].find((point) => point.ClientToken === token && point.LifeCycleState !== 'deleted');
    if (earlier) {
      const same =
        JSON.stringify(earlier.PosixUser) === JSON.stringify(input.PosixUser) &&
        JSON.stringify(earlier.RootDirectory) === JSON.stringify(input.RootDirectory);
      if (same) return this.wire(earlier);
      this.faults.add('efs.AccessPointAlreadyExists');
      throw Object.assign(
        new AwsError('AccessPointAlreadyExists', 'Access point already exists with that client token and other parameters.', 409),
        {
          AccessPointId: earlier.AccessPointId,
        },
      );
    }
    const live = [...this.accessPoints.values()].filter(
      (point) => point.FileSystemId === this.fileSystemId && point.LifeCycleState !== 'deleted',
    );
    if (live.length >= (this.options.accessPointLimit ?? ACCESS_POINTS_PER_FILE_SYSTEM)) {
      this.faults.add('efs.AccessPointLimitExceeded');
      throw new AwsError('AccessPointLimitExceeded', 'You have reached the maximum number of access points for this file system.', 403);
    }
    const id = `fsap-${randomBytes(9).toString('hex')}`;
    const point: SimAccessPoint = {
      AccessPointId: id,
      AccessPointArn: `arn:aws:elasticfilesystem:${REGION}:${ACCOUNT}:access-point/${id}`,
      ClientToken: token,
      FileSystemId: this.fileSystemId,
      ...(input.PosixUser ? { PosixUser: input.PosixUser } : {}),
      ...(input.RootDirectory ? { RootDirectory: input.RootDirectory } : {}),
      Tags: input.Tags ?? [],
      LifeCycleState: 'creating',
      OwnerId: ACCOUNT,
      availableAt: Date.now() + (this.options.creatingMs ?? 100),
    };
    this.accessPoints.set(id, point);
    return this.wire(point);
  }

  private describe(query: URLSearchParams): unknown {
    this.count('DescribeAccessPoints');
    const id = query.get('AccessPointId');
    if (id) {
      const point = this.accessPoints.get(id);
      if (!point || point.LifeCycleState === 'deleted')
        throw new AwsError('AccessPointNotFound', `Access point '${id}' does not exist.`, 404);
      return { AccessPoints: [this.wire(point)] };
    }
    const fileSystemId = query.get('FileSystemId');
    return {
      AccessPoints: [...this.accessPoints.values()]
        .filter((point) => point.LifeCycleState !== 'deleted' && (!fileSystemId || point.FileSystemId === fileSystemId))
        .map((point) => this.wire(point)),
    };
  }

  private delete(id: string): void {
    this.count('DeleteAccessPoint');
    const point = this.accessPoints.get(id);
    if (!point || point.LifeCycleState === 'deleted')
      throw new AwsError('AccessPointNotFound', `Access point '${id}' does not exist.`, 404);
    point.LifeCycleState = 'deleted';
  }

  /** The access point as a mount sees it now: `available` once its creation delay has passed. */
  find(id: string): SimAccessPoint | undefined {
    const point = this.accessPoints.get(id);
    if (point?.LifeCycleState === 'creating' && Date.now() >= point.availableAt) point.LifeCycleState = 'available';
    return point && point.LifeCycleState !== 'deleted' ? point : undefined;
  }

  /**
   * A mount through the access point creates its root directory on first use, owned as
   * CreationInfo says (EFS creates it then); answers where its files are on this machine.
   */
  createRootDirectory(point: SimAccessPoint): string {
    const path = point.RootDirectory?.Path ?? '/';
    const info = point.RootDirectory?.CreationInfo;
    if (!this.directories.has(path) && info)
      this.directories.set(path, { uid: info.OwnerUid, gid: info.OwnerGid, permissions: info.Permissions });
    return this.pathOf(path);
  }

  /** Where a directory of the file system is on this machine. */
  pathOf(fileSystemPath: string): string {
    const local = join(this.root, fileSystemPath);
    mkdirSync(local, { recursive: true });
    return local;
  }

  close(): void {
    rmSync(this.root, { recursive: true, force: true });
  }

  private wire(point: SimAccessPoint): unknown {
    const found = this.find(point.AccessPointId) ?? point;
    const { availableAt: _availableAt, ...wire } = found;
    return wire;
  }
}
