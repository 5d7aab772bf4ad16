import * as acm from 'aws-cdk-lib/aws-certificatemanager';
import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { serviceNameOf } from '../service-name.js';
import type { HttpMethod } from '../../lib/http/routes.js';
import { acknowledgeNagRule } from '../nag.js';
import { addEnvelopeGatewayResponses, envelopeBody } from './gateway-responses.js';
import { MethodNotAllowedError } from '../../lib/errors.js';

export interface ServiceRestApiProps {
  stageName: string;
  throttleRateLimit: number;
  throttleBurstLimit: number;
  tracing: boolean;
  /**
   * Whether to create the account's API Gateway CloudWatch Logs role (AWS::ApiGateway::Account).
   * Without it, the account must already have one in this region, or the stage's execution
   * logging cannot be deployed.
   */
  manageApiGatewayAccount: boolean;
  /** A custom domain mapped with an empty base path, so the API lives at the domain's root. */
  domain?: { domainName: string; certificateArn: string };
}

export interface RouteIntegration {
  id: string;
  method: HttpMethod;
  path: string;
  handler: lambda.IFunction;
}

/**
 * One JSON object per request. API Gateway substitutes variables without escaping them, so only
 * values that cannot hold a quote are logged, plus the error message in its JSON-quoted form.
 */
const accessLogFormat = apigateway.AccessLogFormat.custom(
  JSON.stringify({
    requestId: '$context.requestId',
    extendedRequestId: '$context.extendedRequestId',
    ip: '$context.identity.sourceIp',
    requestTime: '$context.requestTime',
    httpMethod: '$context.httpMethod',
    resourcePath: '$context.resourcePath',
    status: '$context.status',
    responseLength: '$context.responseLength',
    responseLatency: '$context.responseLatency',
    integrationStatus: '$context.integration.status',
    integrationLatency: '$context.integration.latency',
    errorType: '$context.error.responseType',
    errorMessage: 'ERROR_MESSAGE',
    wafResponse: '$context.wafResponseCode',
  }).replace('"ERROR_MESSAGE"', () => '$context.error.messageString'),
);

/**
 * The regional REST API: one Lambda proxy method per route, a 405 mock on every resource
 * that has routes, and API Gateway's own errors rewritten to the service's envelope.
 */
export class ServiceRestApi extends Construct {
  readonly api: apigateway.RestApi;
  readonly domain?: apigateway.DomainName;
  /** The method of each route, by route id, for the dashboard's per-route metrics. */
  readonly methods = new Map<string, apigateway.Method>();

  constructor(scope: Construct, id: string, props: ServiceRestApiProps) {
    super(scope, id);
    const accessLogs = new logs.LogGroup(this, 'AccessLogs', { retention: logs.RetentionDays.ONE_MONTH });

    this.api = new apigateway.RestApi(this, 'Api', {
      // The ApiName dimension of the AWS/ApiGateway metrics is this name, so it is unique per
      // account and region like the stack's (docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-metrics-and-dimensions.html).
      restApiName: serviceNameOf(this),
      description: 'Container hosting service',
      endpointTypes: [apigateway.EndpointType.REGIONAL],
      // Execution logging needs the account-wide API Gateway logging role; AWS::ApiGateway::Account
      // sets it for the whole account and region, replacing any role set before
      // (docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/aws-resource-apigateway-account.html).
      cloudWatchRole: props.manageApiGatewayAccount,
      deployOptions: {
        stageName: props.stageName,
        throttlingRateLimit: props.throttleRateLimit,
        throttlingBurstLimit: props.throttleBurstLimit,
        accessLogDestination: new apigateway.LogGroupLogDestination(accessLogs),
        accessLogFormat,
        // ERROR, not INFO, and no data trace: execution logs must never hold a credential.
        loggingLevel: apigateway.MethodLoggingLevel.ERROR,
        dataTraceEnabled: false,
        metricsEnabled: true,
        tracingEnabled: props.tracing,
      },
    });
    addEnvelopeGatewayResponses(this.api);

    if (props.domain) {
      // No basePath: the mapping is for the empty path, so /api/v1/... and
      // /.well-known/oauth-authorization-server sit at the domain's root (RFC 8414 section 3)
      // (docs.aws.amazon.com/cdk/api/v2/docs/aws-cdk-lib.aws_apigateway.DomainNameProps.html).
      this.domain = new apigateway.DomainName(this, 'Domain', {
        domainName: props.domain.domainName,
        certificate: acm.Certificate.fromCertificateArn(this, 'Certificate', props.domain.certificateArn),
        endpointType: apigateway.EndpointType.REGIONAL,
        securityPolicy: apigateway.SecurityPolicy.TLS_1_2,
        mapping: this.api,
      });
    }

    acknowledgeNagRule(
      this.api,
      'AwsSolutions-APIG4',
      'Authentication is the service itself (sessions, personal access tokens and OAuth access tokens checked by the Middy chain of every function, per the route table); public routes such as sign-in and the OAuth token endpoint must stay open, and the 405 mocks answer before any authentication by design.',
    );
    acknowledgeNagRule(
      this.api,
      'AwsSolutions-COG4',
      'The service is its own OAuth 2.0 provider and issues its own credentials, so there is no Cognito user pool to authorize against.',
    );
    acknowledgeNagRule(
      this.api,
      'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
      "The API Gateway account-level logging role (one per account and region, shared by every REST API) uses AWS's documented managed policy; execution logging, required by APIG6, cannot work without it.",
    );
  }

  /** Adds every route and then the 405 responses, which need each resource's full method list. */
  addRoutes(routes: readonly RouteIntegration[]): void {
    // Path parameters are declared required per method below. Bodies are validated by each
    // function (zod); body validation here applies only to methods that are given a request model.
    const validateRequests = this.api.addRequestValidator('RequestValidator', {
      validateRequestParameters: true,
      validateRequestBody: true,
    });
    const methodsByResource = new Map<apigateway.IResource, HttpMethod[]>();

    for (const route of routes) {
      const resource = this.api.root.resourceForPath(route.path);
      const method = resource.addMethod(route.method, new apigateway.LambdaIntegration(route.handler, { allowTestInvoke: false }), {
        operationName: route.id,
        requestValidator: validateRequests,
        requestParameters: Object.fromEntries(pathParameters(route.path).map((name) => [`method.request.path.${name}`, true])),
      });
      this.methods.set(route.id, method);
      methodsByResource.set(resource, [...(methodsByResource.get(resource) ?? []), route.method]);
    }

    for (const [resource, methods] of methodsByResource) addMethodNotAllowed(resource, methods);
  }
}

/** A greedy `{name+}` is requested as `name` (method.request.path.name). */
function pathParameters(path: string): string[] {
  return [...path.matchAll(/\{([^}+]+)\+?\}/g)].map((match) => match[1] ?? '');
}

/** An explicit method wins over ANY in API Gateway, so ANY catches exactly the methods not routed. */
function addMethodNotAllowed(resource: apigateway.IResource, methods: readonly HttpMethod[]): void {
  const allowedMethods = [...new Set(methods)].sort();
  const allowed = allowedMethods.join(', ');
  resource.addMethod(
    'ANY',
    new apigateway.MockIntegration({
      // A mock takes its status from the request template, so every body type the API accepts gets one.
      passthroughBehavior: apigateway.PassthroughBehavior.WHEN_NO_MATCH,
      requestTemplates: Object.fromEntries(
        ['application/json', 'application/x-www-form-urlencoded', 'text/plain'].map((type) => [type, '{"statusCode": 405}']),
      ),
      integrationResponses: [
        {
          statusCode: '405',
          responseParameters: {
            'method.response.header.Allow': `'${allowed}'`,
            'method.response.header.Content-Type': "'application/json'",
          },
          responseTemplates: { 'application/json': envelopeBody(new MethodNotAllowedError(allowedMethods)) },
        },
      ],
    }),
    {
      methodResponses: [
        {
          statusCode: '405',
          responseParameters: { 'method.response.header.Allow': true, 'method.response.header.Content-Type': true },
        },
      ],
    },
  );
}
