import { describe, expect, it } from 'vitest';
import { buildEventFromMessage } from '../../../lib/aws/build-event-messages.js';
import { newId } from '../../../lib/ids.js';

const ref = { accountId: newId(), containerId: newId(), deployId: newId() };

describe('buildEventFromMessage', () => {
  it('reads an uploaded context from the bucket’s Object Created event, by the deploy its key names', () => {
    // Prepare
    const body = JSON.stringify({
      source: 'aws.s3',
      'detail-type': 'Object Created',
      detail: {
        bucket: { name: 'contexts' },
        object: { key: `contexts/${ref.accountId}/${ref.containerId}/${ref.deployId}.tar.gz`, size: 10 },
      },
    });
    // Act / Assess
    expect(buildEventFromMessage(body)).toEqual({ kind: 'uploaded', ref });
  });

  it('passes over objects that are not a deploy’s context, and anything that is not an event', () => {
    // Prepare
    const objectAt = (key: string) => JSON.stringify({ source: 'aws.s3', 'detail-type': 'Object Created', detail: { object: { key } } });
    // Act / Assess
    expect(buildEventFromMessage(objectAt('contexts/../x.tar.gz'))).toBeUndefined();
    expect(buildEventFromMessage(objectAt(`other/${ref.accountId}/${ref.containerId}/${ref.deployId}.tar.gz`))).toBeUndefined();
    expect(buildEventFromMessage('not json')).toBeUndefined();
  });

  it('reads a build deadline, and refuses one whose ids are not ids', () => {
    // Prepare
    const deadline = (detail: object) => JSON.stringify({ source: 'container-hosting.deploys', 'detail-type': 'Build Deadline', detail });
    // Act / Assess
    expect(buildEventFromMessage(deadline(ref))).toEqual({ kind: 'deadline', ref });
    expect(buildEventFromMessage(deadline({ ...ref, deployId: '../x' }))).toBeUndefined();
  });
});
