import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { METRICS_NAMESPACE, type MetricName } from './metric-names.js';

/**
 * Counts written as CloudWatch embedded metric format (EMF) lines on stdout, which Lambda's log
 * group turns into metrics: no API call, no permission, no latency
 * (docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format.html).
 * Every count carries `service` (POWERTOOLS_SERVICE_NAME). They are written on Lambda
 * (AWS_LAMBDA_FUNCTION_NAME is set) and nowhere else, the local stack and the tests included,
 * unless POWERTOOLS_METRICS_DISABLED says otherwise (`false` turns them on anywhere, `true` off).
 */
const emitting = (): boolean => process.env.POWERTOOLS_METRICS_DISABLED !== undefined || Boolean(process.env.AWS_LAMBDA_FUNCTION_NAME);

const metrics = new Metrics({
  namespace: process.env.POWERTOOLS_METRICS_NAMESPACE || METRICS_NAMESPACE,
  serviceName: process.env.POWERTOOLS_SERVICE_NAME || 'container-hosting',
});

/**
 * Counts one event now, as its own EMF line: one line holds one dimension set, so counts with
 * different dimensions are never batched together.
 */
export function countEvent(name: MetricName, dimensions: Record<string, string> = {}, count = 1): void {
  // Read per count, like the single-metric instance below reads POWERTOOLS_METRICS_DISABLED.
  if (!emitting() || count <= 0) return;
  const line = metrics.singleMetric();
  for (const [dimension, value] of Object.entries(dimensions)) line.addDimension(dimension, value);
  line.addMetric(name, MetricUnit.Count, count);
}
