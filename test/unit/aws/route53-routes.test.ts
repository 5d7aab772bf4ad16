import { ChangeResourceRecordSetsCommand, Route53Client, type ChangeResourceRecordSetsCommandInput } from '@aws-sdk/client-route-53';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { Route53AppRoutes } from '../../../lib/aws/route53-routes.js';

const route53Mock = mockClient(Route53Client);
const routes = new Route53AppRoutes({ hostedZoneId: 'Z0123456789', zoneName: 'apps.internal' });
const route = { hostname: 'web-1', ip: '10.0.3.17', port: 3000 };

/** The one change batch both records move in, for an action. */
const batch = (action: 'UPSERT' | 'DELETE', ip = '10.0.3.17', port = 3000): ChangeResourceRecordSetsCommandInput => ({
  HostedZoneId: 'Z0123456789',
  ChangeBatch: {
    Comment: `${action} web-1`,
    Changes: [
      { Action: action, ResourceRecordSet: { Name: 'web-1.apps.internal', Type: 'A', TTL: 5, ResourceRecords: [{ Value: ip }] } },
      {
        Action: action,
        ResourceRecordSet: {
          Name: '_http._tcp.web-1.apps.internal',
          Type: 'SRV',
          TTL: 5,
          ResourceRecords: [{ Value: `0 0 ${port} web-1.apps.internal` }],
        },
      },
    ],
  },
});

beforeEach(() => {
  route53Mock.reset();
});

describe('Route53AppRoutes', () => {
  it('publishes the task’s address (A) and port (SRV) under the hostname in one UPSERT batch', async () => {
    route53Mock.on(ChangeResourceRecordSetsCommand).resolves({ ChangeInfo: { Id: 'c1', Status: 'PENDING', SubmittedAt: new Date() } });

    await routes.publish(route);

    expect(route53Mock.calls().map((call) => call.args[0].input)).toEqual([batch('UPSERT')]);
  });

  it('withdraws exactly the records of this task in one DELETE batch', async () => {
    route53Mock.on(ChangeResourceRecordSetsCommand).resolves({ ChangeInfo: { Id: 'c2', Status: 'PENDING', SubmittedAt: new Date() } });

    expect(await routes.withdraw(route)).toBe(true);
    expect(route53Mock.calls().map((call) => call.args[0].input)).toEqual([batch('DELETE')]);
  });

  it('leaves records that another task replaced, or that are gone, and says so', async () => {
    route53Mock.on(ChangeResourceRecordSetsCommand).rejects(
      Object.assign(new Error('Tried to delete resource record set but the values provided do not match'), {
        name: 'InvalidChangeBatch',
      }),
    );

    expect(await routes.withdraw(route)).toBe(false);
    expect(route53Mock.calls().map((call) => call.args[0].input)).toEqual([batch('DELETE')]);
  });

  it('passes other Route 53 errors on, so the event is delivered again', async () => {
    route53Mock.on(ChangeResourceRecordSetsCommand).rejects(Object.assign(new Error('Rate exceeded'), { name: 'Throttling' }));

    await expect(routes.withdraw(route)).rejects.toThrow('Rate exceeded');
    await expect(routes.publish(route)).rejects.toThrow('Rate exceeded');
    expect(route53Mock.calls().map((call) => call.args[0].input)).toEqual([batch('DELETE'), batch('UPSERT')]);
  });
});
