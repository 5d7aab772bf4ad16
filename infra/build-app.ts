import { App, Validations, type AppProps } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { Route } from '../lib/http/routes.js';
import { readSettings } from './settings.js';
import { ContainerHostingStack } from './stack.js';

export interface BuildAppOptions extends AppProps {
  /** Off only in tests that run the checks themselves to list what they find. */
  nagChecks?: boolean;
  routes?: readonly Route[];
  sourceRoot?: string;
  /** The Region the stack deploys to, when known: the CDK CLI sets CDK_DEFAULT_REGION from its profile or --region. */
  deploymentRegion?: string;
}

/**
 * The CDK app: one environment-agnostic stack (no account or region, no lookups, so synth
 * works offline) checked by cdk-nag's AWS Solutions pack.
 */
export function buildApp(options: BuildAppOptions = {}): { app: App; stack: ContainerHostingStack } {
  const { nagChecks = true, routes, sourceRoot, deploymentRegion = process.env.CDK_DEFAULT_REGION, ...appProps } = options;
  const app = new App(appProps);
  const settings = readSettings(app.node);
  const stack = new ContainerHostingStack(app, settings.stackName, {
    description: 'Container hosting service with its own OAuth 2.0 provider',
    settings,
    routes,
    sourceRoot,
    deploymentRegion,
  });
  // cdk-nag 3 is a policy-validation plugin: any unacknowledged finding fails synth.
  if (nagChecks) Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  return { app, stack };
}
