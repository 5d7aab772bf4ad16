import {
  ChangeResourceRecordSetsCommand,
  ListResourceRecordSetsCommand,
  type Change,
  type ResourceRecordSet,
  type Route53Client,
} from '@aws-sdk/client-route-53';
import type { AwsStub } from 'aws-sdk-client-mock';

/**
 * A private hosted zone as Route 53 keeps it, behind a mocked client: record sets keyed by
 * name, type and SetIdentifier; a batch applies all or nothing; CREATE of an existing set or a
 * DELETE that does not name a set's current values exactly fails the batch with
 * InvalidChangeBatch (https://docs.aws.amazon.com/Route53/latest/APIReference/API_ChangeResourceRecordSets.html);
 * ListResourceRecordSets answers pages in name order and continues from NextRecordName,
 * NextRecordType and NextRecordIdentifier (https://docs.aws.amazon.com/Route53/latest/APIReference/API_ListResourceRecordSets.html).
 * Names come back with their trailing dot, as Route 53 answers them.
 */
export class FakeZone {
  readonly sets = new Map<string, ResourceRecordSet>();
  /** Batches refused, by their comment. */
  readonly refused: string[] = [];

  constructor(
    mock: AwsStub<any, any, any>,
    zoneName: string,
    /** Smaller than Route 53's 300 so tests cross pages. */
    private readonly pageSize = 300,
  ) {
    this.sets.set(keyOf({ Name: `${zoneName}.`, Type: 'SOA' }), {
      Name: `${zoneName}.`,
      Type: 'SOA',
      TTL: 900,
      // As Route 53 creates a private zone's (https://docs.aws.amazon.com/Route53/latest/DeveloperGuide/SOA-NSrecords.html).
      ResourceRecords: [{ Value: 'ns-1536.awsdns-00.co.uk. awsdns-hostmaster.amazon.com. 1 7200 900 1209600 86400' }],
    });
    this.sets.set(keyOf({ Name: `${zoneName}.`, Type: 'NS' }), {
      Name: `${zoneName}.`,
      Type: 'NS',
      TTL: 172800,
      ResourceRecords: [{ Value: 'ns' }],
    });
    mock.on(ChangeResourceRecordSetsCommand).callsFake((input) => this.change(input.ChangeBatch.Changes, input.ChangeBatch.Comment));
    mock.on(ListResourceRecordSetsCommand).callsFake((input) => this.list(input));
  }

  private change(changes: Change[], comment = ''): object {
    const next = new Map(this.sets);
    for (const { Action, ResourceRecordSet: set } of changes) {
      const withDot = { ...set!, Name: set!.Name!.endsWith('.') ? set!.Name! : `${set!.Name}.` };
      const key = keyOf(withDot);
      const current = next.get(key);
      if (Action === 'DELETE') {
        if (!current || JSON.stringify(current) !== JSON.stringify(withDot)) {
          this.refused.push(comment);
          throw Object.assign(
            new Error(`Tried to delete resource record set [name='${withDot.Name}', type='${withDot.Type}'] but it was not found`),
            {
              name: 'InvalidChangeBatch',
            },
          );
        }
        next.delete(key);
      } else next.set(key, withDot);
    }
    this.sets.clear();
    for (const [key, value] of next) this.sets.set(key, value);
    return { ChangeInfo: { Id: '/change/C1', Status: 'PENDING', SubmittedAt: new Date() } };
  }

  private list(input: { StartRecordName?: string; StartRecordType?: string; StartRecordIdentifier?: string; MaxItems?: number }): object {
    const ordered = [...this.sets.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const startKey = input.StartRecordName
      ? keyOf({ Name: input.StartRecordName, Type: input.StartRecordType ?? '', SetIdentifier: input.StartRecordIdentifier ?? '' })
      : '';
    const rest = ordered.filter(([key]) => key >= startKey);
    const size = Math.min(input.MaxItems ?? 300, this.pageSize);
    const page = rest.slice(0, size).map(([, set]) => set);
    const following = rest[size]?.[1];
    return {
      ResourceRecordSets: page,
      IsTruncated: following !== undefined,
      MaxItems: size,
      ...(following
        ? {
            NextRecordName: following.Name,
            NextRecordType: following.Type,
            ...(following.SetIdentifier ? { NextRecordIdentifier: following.SetIdentifier } : {}),
          }
        : {}),
    };
  }

  /** The values of the record sets of a name (without the trailing dot) and type. */
  values(name: string, type: string): string[] {
    return [...this.sets.values()]
      .filter((set) => set.Name === `${name}.` && set.Type === type)
      .flatMap((set) => (set.ResourceRecords ?? []).map((record) => record.Value!));
  }
}

/** Route 53's order: names with their labels reversed, then type, then SetIdentifier. */
const keyOf = (set: { Name?: string; Type?: string; SetIdentifier?: string }): string =>
  `${set.Name!.replace(/\.$/, '').split('.').reverse().join('.')}|${set.Type}|${set.SetIdentifier ?? ''}`;

export type { Route53Client };
