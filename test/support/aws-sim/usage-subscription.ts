/**
 * The du sidecars' subscription filter as the stack creates it (infra/constructs/volume-usage-logs.ts),
 * read from its synthesized template, never restated here: CloudWatch Logs gets it from CloudFormation,
 * and the code never calls PutSubscriptionFilter, so the simulator takes it from the same place.
 */
export interface SynthesizedSubscription {
  filterName: string;
  filterPattern: string;
}

let synthesized: Promise<SynthesizedSubscription> | undefined;
export function synthesizedUsageSubscription(): Promise<SynthesizedSubscription> {
  synthesized ??= (async () => {
    const [{ App, Stack }, iam, lambda, { VolumeUsageLogs }] = await Promise.all([
      import('aws-cdk-lib'),
      import('aws-cdk-lib/aws-iam'),
      import('aws-cdk-lib/aws-lambda'),
      import('../../../infra/constructs/volume-usage-logs.js'),
    ]);
    const stack = new Stack(new App(), 'SimulatedVolumeUsage', { env: { account: '123456789012', region: 'us-east-1' } });
    const usage = new VolumeUsageLogs(stack, 'VolumeUsage', {
      executionRole: new iam.Role(stack, 'ExecutionRole', { assumedBy: new iam.ServicePrincipal('ecs-tasks.amazonaws.com') }),
    });
    const handler = lambda.Function.fromFunctionArn(stack, 'Usage', 'arn:aws:lambda:us-east-1:123456789012:function:recordVolumeUsage');
    const filter = usage.deliverTo(handler);
    // The filter's CloudFormation properties as the template gets them, without synthesizing the whole app.
    const rendered = stack.resolve((filter.node.defaultChild as unknown as { _toCloudFormation(): object })._toCloudFormation());
    const [resource] = Object.values((rendered as { Resources: object }).Resources) as Array<{ Type: string; Properties: any }>;
    if (resource?.Type !== 'AWS::Logs::SubscriptionFilter') throw new Error(`expected the subscription filter, got ${resource?.Type}`);
    return { filterName: 'PushedUsage', filterPattern: String(resource.Properties.FilterPattern) };
  })();
  return synthesized;
}
