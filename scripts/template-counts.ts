/**
 * The figures that come from the synthesized templates: resources per template, functions, alarms
 * and the metrics they read, and the at-rest costs built on them (docs/deploying.md's tables, and
 * docs/routing.md's figure for routing at rest, all from `routingAtRest`). `npm run
 * template-counts` rewrites the marked blocks of docs/deploying.md and docs/routing.md; `-- --check`
 * only says whether they agree (test/infra/template-counts.test.ts fails when they do not). The stack is synthesized with
 * routing and an API domain on, and without bundling the functions (context aws:cdk:bundling-stacks).
 */
import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NestedStack, type Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { buildApp } from '../infra/build-app.js';
import { routingFunctions } from '../infra/event-functions.js';
import { repositoryRoot } from '../infra/paths.js';
import { withBlocks } from './doc-blocks.js';

export { withBlocks };

interface CfnResource {
  Type: string;
  // biome-ignore lint/suspicious/noExplicitAny: CloudFormation properties are untyped JSON, read field by field below.
  Properties?: Record<string, any>;
  id?: string;
}

export interface TemplateCounts {
  /** Resources per template: main, then the nested stacks by name. */
  templates: Array<{ name: string; resources: number }>;
  functions: number;
  alarms: number;
  /** Metrics the alarms read: one per single-metric alarm, each MetricStat of a metric-math alarm. */
  alarmMetrics: number;
  dashboards: number;
  wafRules: number;
  kmsKeys: number;
  rotatingKmsKeys: number;
  secrets: number;
  /** Of those, the ones only a stack with routing has (the wake secret). */
  routingSecrets: number;
  /**
   * Of the alarm metrics, those only a stack with routing has: its functions' (wake, access log,
   * route writer) and the route changes queue's.
   */
  routingAlarmMetrics: number;
  apiMethods: number;
  pullThroughRules: number;
}

const certificateArn = 'arn:aws:acm:us-east-1:111122223333:certificate/0a1b2c3d-4e5f-6789-abcd-ef0123456789';

function stacksUnder(stack: Stack): Stack[] {
  return [stack, ...stack.node.findAll().filter((construct): construct is NestedStack => NestedStack.isNestedStack(construct))];
}

/** Counts what the full stack (routing and an API domain on) declares. */
export function templateCounts(): TemplateCounts {
  const { stack } = buildApp({
    outdir: mkdtempSync(join(tmpdir(), 'template-counts-')),
    nagChecks: false,
    context: {
      'aws:cdk:bundling-stacks': [],
      appsDomain: 'apps.example.com',
      appsCertificateArn: certificateArn,
      apiDomain: 'api.example.net',
      apiCertificateArn: certificateArn,
    },
  });
  const templates = stacksUnder(stack).map((each) => ({
    name: each === stack ? 'main' : each.node.id,
    resources: Object.entries(Template.fromStack(each).toJSON().Resources as Record<string, CfnResource>).map(([id, resource]) => ({
      ...resource,
      id,
    })),
  }));
  const all = templates.flatMap((template) => template.resources);
  const ofType = (type: string) => all.filter((resource) => resource.Type === type);
  const alarms = ofType('AWS::CloudWatch::Alarm');
  const metricsOf = (alarm: CfnResource) => {
    const metrics = alarm.Properties?.Metrics as Array<{ MetricStat?: unknown }> | undefined;
    return metrics ? metrics.filter((metric) => metric.MetricStat).length : 1;
  };
  const alarmMetrics = alarms.reduce((sum, alarm) => sum + metricsOf(alarm), 0);
  // A function's or queue's metrics name it by a reference to its logical id, which starts with its construct id.
  const routingOnlyIds = [...routingFunctions.map((fn) => fn.id), 'RouteChangesQueue'];
  const routingAlarmMetrics = alarms.reduce((sum, alarm) => {
    const json = JSON.stringify(alarm.Properties ?? {});
    const perFunction = (alarm.Properties?.Metrics as Array<{ MetricStat?: unknown }> | undefined)?.filter(
      (metric) => metric.MetricStat && routingOnlyIds.some((id) => JSON.stringify(metric).includes(id)),
    ).length;
    if (perFunction !== undefined) return sum + perFunction;
    return sum + (routingOnlyIds.some((id) => json.includes(id)) ? 1 : 0);
  }, 0);
  const keys = ofType('AWS::KMS::Key');
  return {
    templates: templates.map(({ name, resources }) => ({ name, resources: resources.length })),
    functions: ofType('AWS::Lambda::Function').length,
    alarms: alarms.length,
    alarmMetrics,
    dashboards: ofType('AWS::CloudWatch::Dashboard').length,
    wafRules: ofType('AWS::WAFv2::WebACL').reduce((sum, acl) => sum + (acl.Properties?.Rules?.length ?? 0), 0),
    kmsKeys: keys.length,
    rotatingKmsKeys: keys.filter((key) => key.Properties?.EnableKeyRotation === true).length,
    secrets: ofType('AWS::SecretsManager::Secret').length,
    routingSecrets: ofType('AWS::SecretsManager::Secret').filter((secret) => secret.id.startsWith('WakeSecret')).length,
    routingAlarmMetrics,
    apiMethods: ofType('AWS::ApiGateway::Method').filter((method) => method.Properties?.HttpMethod !== 'OPTIONS').length,
    pullThroughRules: ofType('AWS::ECR::PullThroughCacheRule').length,
  };
}

const HOURS = 730;
const dollars = (value: number) => `$${value.toFixed(2)}`;

/** us-east-1 list prices, from the pages each row cites. */
const PRICE = {
  natHour: 0.045,
  ipv4Hour: 0.005,
  webAcl: 5,
  wafRule: 1,
  alarmMetric: 0.1,
  dashboard: 3,
  kmsKey: 1,
  secret: 0.4,
  albHour: 0.0225,
  lcuHour: 0.008,
  fargateArmVcpuHour: 0.03238,
  fargateArmGbHour: 0.00356,
  hostedZone: 0.5,
  customMetric: 0.3,
};
/** Metrics standard Container Insights publishes for the proxy cluster and its one service (an estimate: see its row in docs/deploying.md). */
const PROXY_INSIGHTS_METRICS = 25;
/** API Gateway's per-method metrics with detailed metrics on: Count, 4XXError, 5XXError, Latency, IntegrationLatency. */
const METRICS_PER_METHOD = 5;

/** A part of the bill that only routing (`appsDomain`) adds, at rest: what it is, how it is counted, a month of it. */
interface RoutingPart {
  item: string;
  quantity: string;
  monthly: number;
}

/**
 * What routing adds at rest, the one source of the three places that say it (docs/routing.md's
 * sentence, docs/deploying.md's at-rest table and its routing table): the load balancer and its addresses, the
 * proxy tasks and their Container Insights, the private zone, and the wake secret and the routing
 * functions' and queue's alarm metrics that only a stack with routing has.
 */
export function routingAtRest(counts: TemplateCounts): { parts: RoutingPart[]; total: number } {
  const parts: RoutingPart[] = [
    { item: 'load balancer hours', quantity: `1 × ${HOURS} h × $${PRICE.albHour}`, monthly: HOURS * PRICE.albHour },
    {
      item: 'public IPv4 of the load balancer (one per zone)',
      quantity: `2 × ${HOURS} h × $${PRICE.ipv4Hour}`,
      monthly: 2 * HOURS * PRICE.ipv4Hour,
    },
    {
      item: 'proxy tasks (minimum)',
      quantity: `2 × ${HOURS} h × (0.25 vCPU × $${PRICE.fargateArmVcpuHour} + 0.5 GB × $${PRICE.fargateArmGbHour})`,
      monthly: 2 * PROXY_TASK_MONTH,
    },
    {
      item: 'Container Insights on the proxy cluster (standard)',
      quantity: `about ${PROXY_INSIGHTS_METRICS} cluster and service metrics × $${PRICE.customMetric.toFixed(2)} (an estimate: custom metrics, CloudWatch pricing)`,
      monthly: PROXY_INSIGHTS_METRICS * PRICE.customMetric,
    },
    { item: 'private hosted zone', quantity: `1 × $${PRICE.hostedZone.toFixed(2)}`, monthly: PRICE.hostedZone },
    {
      item: 'the wake secret (Secrets Manager)',
      quantity: `${counts.routingSecrets} × $${PRICE.secret.toFixed(2)}`,
      monthly: counts.routingSecrets * PRICE.secret,
    },
    {
      item: 'alarm metrics of the wake, access-log and route writer functions and the route changes queue',
      quantity: `${counts.routingAlarmMetrics} × $${PRICE.alarmMetric.toFixed(2)}`,
      monthly: counts.routingAlarmMetrics * PRICE.alarmMetric,
    },
  ];
  return { parts, total: parts.reduce((sum, part) => sum + part.monthly, 0) };
}

/** One proxy task (Fargate arm64, 0.25 vCPU, 0.5 GB) for a month. */
const PROXY_TASK_MONTH = HOURS * (0.25 * PRICE.fargateArmVcpuHour + 0.5 * PRICE.fargateArmGbHour);

/** The routing layer's cost table, a marked block of docs/deploying.md. */
function routingCostsBlock(counts: TemplateCounts): Record<string, string> {
  const { parts, total } = routingAtRest(counts);
  const costs = [
    '| item | quantity | per month |',
    '|---|---|---|',
    ...parts.map(({ item, quantity, monthly }) => `| ${item} | ${quantity} | ${dollars(monthly)} |`),
    `| **at rest** | | **${dollars(total)}** |`,
    `| load balancer LCUs (light traffic: ~1 LCU on average) | ${HOURS} LCU-h × $${PRICE.lcuHour} | ${dollars(HOURS * PRICE.lcuHour)} |`,
    '| DNS lookups by the proxies (2 per 5 s per task per hostname in use) | ~2.1 M per busy hostname | ~$0.84 per busy hostname |',
    '',
    `Each further proxy task adds ${dollars(PROXY_TASK_MONTH)} a month while it runs.`,
  ].join('\n');
  return { 'routing-costs': costs };
}

/** The marked blocks of docs/deploying.md, by name. */
export function deployingDocBlocks(counts: TemplateCounts): Record<string, string> {
  const [main, ...nested] = counts.templates;
  const templateList = [
    `the main template holds ${main!.resources} resources`,
    ...nested.map(({ name, resources }) => `the ${name} nested stack ${resources}`),
  ];
  const resources = [
    `With routing and an API domain on, ${templateList.join(', ')};`,
    `the stack has ${counts.functions} Lambda functions, ${counts.alarms} alarms reading ${counts.alarmMetrics} metrics,`,
    `${counts.apiMethods} API methods and ${counts.pullThroughRules} ECR pull-through cache rules (without the credential settings).`,
  ].join('\n');

  const nat = HOURS * (PRICE.natHour + PRICE.ipv4Hour);
  const waf = PRICE.webAcl + PRICE.wafRule * counts.wafRules;
  const alarms = PRICE.alarmMetric * counts.alarmMetrics;
  const baseAlarms = PRICE.alarmMetric * (counts.alarmMetrics - counts.routingAlarmMetrics);
  const dashboards = PRICE.dashboard * counts.dashboards;
  const keys = PRICE.kmsKey * counts.kmsKeys;
  const secrets = PRICE.secret * counts.secrets;
  const baseSecrets = PRICE.secret * (counts.secrets - counts.routingSecrets);
  const alb = HOURS * PRICE.albHour;
  const albAddresses = 2 * HOURS * PRICE.ipv4Hour;
  const proxies = 2 * PROXY_TASK_MONTH;
  const zone = PRICE.hostedZone;
  const insights = PROXY_INSIGHTS_METRICS * PRICE.customMetric;
  const base = nat + waf + baseAlarms + dashboards + keys + baseSecrets;
  const routing = routingAtRest(counts).total;
  const routed = base + routing;
  const rotation =
    counts.rotatingKmsKeys > 0
      ? `; with rotation on (${counts.rotatingKmsKeys} of them), each of a key's first two yearly rotations adds $1 a month`
      : '; rotation is off';
  const costs = [
    '| part | without routing | with `appsDomain` | price |',
    '|---|---|---|---|',
    `| NAT gateway (1), with its public IPv4 | ${dollars(nat)} | ${dollars(nat)} | $0.045/h + $0.005/h ([VPC pricing](https://aws.amazon.com/vpc/pricing/), [public IPv4](https://aws.amazon.com/blogs/aws/new-aws-public-ipv4-address-charge-public-ip-insights/)); \`natGateways=2\` doubles it |`,
    `| WAF web ACL on the API, ${counts.wafRules} rules | ${dollars(waf)} | ${dollars(waf)} | $5 per web ACL + $1 per rule ([AWS WAF pricing](https://aws.amazon.com/waf/pricing/)) |`,
    `| CloudWatch alarms: ${counts.alarmMetrics} alarm metrics (${counts.alarms} alarms; ${counts.routingAlarmMetrics} of the metrics, with routing only, are the wake, access-log and route writer functions' and the route changes queue's) | ${dollars(baseAlarms)} | ${dollars(alarms)} | $0.10 per alarm metric; the first 10 are free ([CloudWatch pricing](https://aws.amazon.com/cloudwatch/pricing/)) |`,
    `| CloudWatch dashboard (${counts.dashboards}) | ${dollars(dashboards)} | ${dollars(dashboards)} | $3 per dashboard beyond the 3 free ([CloudWatch pricing](https://aws.amazon.com/cloudwatch/pricing/)) |`,
    `| KMS keys (${counts.kmsKeys}: the alarm topic's) | ${dollars(keys)} | ${dollars(keys)} | $1 per key a month${rotation} ([KMS pricing](https://aws.amazon.com/kms/pricing/)) |`,
    `| Secrets Manager secrets (${counts.secrets}: the refresh grace key, and with routing the wake secret) | ${dollars(baseSecrets)} | ${dollars(secrets)} | $0.40 per secret a month, $0.05 per 10,000 calls ([Secrets Manager pricing](https://aws.amazon.com/secrets-manager/pricing/)); a Docker Hub or GitHub credentials secret adds $0.40 each |`,
    `| Application Load Balancer | | ${dollars(alb)} | $0.0225/h, plus LCUs with traffic ([ELB pricing](https://aws.amazon.com/elasticloadbalancing/pricing/)) |`,
    `| its 2 public IPv4 addresses (one per zone) | | ${dollars(albAddresses)} | $0.005/h each |`,
    `| 2 Caddy proxy tasks (Fargate arm64, 0.25 vCPU, 0.5 GB) | | ${dollars(proxies)} | $0.03238 per vCPU-h + $0.00356 per GB-h ([Fargate pricing](https://aws.amazon.com/fargate/pricing/)) |`,
    `| Container Insights on the proxy cluster (about ${PROXY_INSIGHTS_METRICS} cluster and service metrics, an estimate) | | ${dollars(insights)} | custom metrics at $0.30 each a month ([CloudWatch pricing](https://aws.amazon.com/cloudwatch/pricing/)), plus its performance log events at $0.50 per GB |`,
    `| Route 53 private hosted zone | | ${dollars(zone)} | $0.50 per zone a month ([Route 53 pricing](https://aws.amazon.com/route53/pricing/)) |`,
    `| **total** | **${dollars(base)}** | **${dollars(routed)}** | |`,
    '',
    `With traffic, API Gateway's detailed metrics (on, for the per-route dashboard) are custom metrics too:`,
    `${METRICS_PER_METHOD} per method (Count, 4XXError, 5XXError, Latency, IntegrationLatency) for ${counts.apiMethods} methods, up to`,
    `${dollars(counts.apiMethods * METRICS_PER_METHOD * PRICE.customMetric)} a month when every method is called every hour (CloudWatch prorates a metric by the hours it`,
    'receives data, so routes nobody calls cost nothing).',
  ].join('\n');
  return { 'template-counts': resources, 'at-rest-costs': costs, ...routingCostsBlock(counts) };
}

/** The marked block of docs/routing.md: what routing costs at rest, in one sentence. */
export function routingDocBlocks(counts: TemplateCounts): Record<string, string> {
  const routingSentence = [
    `Routing costs ${dollars(routingAtRest(counts).total)} a month at rest: the load balancer, its addresses, two proxy tasks, their`,
    "Container Insights, the private zone, the wake secret and its functions' alarms",
    '([What it costs](deploying.md#what-it-costs); [the routing layer](deploying.md#what-the-routing-layer-costs-us-east-1-per-month-of-730-hours)).',
  ].join('\n');
  return { 'routing-at-rest': routingSentence };
}

/** Each generated file and its blocks. */
export const generatedFiles: ReadonlyArray<{ path: string; blocks: (counts: TemplateCounts) => Record<string, string> }> = [
  { path: 'docs/deploying.md', blocks: deployingDocBlocks },
  { path: 'docs/routing.md', blocks: routingDocBlocks },
];

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  const counts = templateCounts();
  console.log(JSON.stringify(counts, null, 2));
  let stale = false;
  for (const { path, blocks } of generatedFiles) {
    const file = join(repositoryRoot, path);
    const text = readFileSync(file, 'utf8');
    const updated = withBlocks(text, blocks(counts));
    if (updated === text) continue;
    if (process.argv.includes('--check')) {
      console.error(`${path} disagrees with the templates: run npm run template-counts`);
      stale = true;
    } else {
      writeFileSync(file, updated);
      console.log(`${path} updated`);
    }
  }
  if (stale) process.exit(1);
}
