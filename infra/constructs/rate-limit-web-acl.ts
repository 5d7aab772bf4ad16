import * as wafv2 from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import type { HttpMethod } from '../../lib/http/routes.js';

/** A route by method and path (an API Gateway template such as `/api/v1/tokens/{token_id}`). */
export interface RateLimitedRoute {
  method: HttpMethod;
  path: string;
}

export interface RateLimitWebAclProps {
  /**
   * Routes whose requests count against the per-IP limit. Matched by method and path, so a page
   * view on the same path (GET /login on every consent redirect) does not use up sign-in attempts.
   */
  rateLimitedRoutes: readonly RateLimitedRoute[];
  /** Requests per IP per 5-minute window on those routes. */
  limitPer5Min: number;
  /**
   * Requests per IP per 5-minute window over the whole API, so one client cannot use up the
   * stage throttle every client shares (context `apiRateLimitPer5Min`).
   */
  apiLimitPer5Min: number;
  /**
   * Routes that write for an unauthenticated caller (GET /api/v1/oauth/authorize stores the
   * pending request), with their own per-IP limit (context `authorizeRateLimitPer5Min`).
   */
  unauthenticatedWriteRoutes: readonly RateLimitedRoute[];
  unauthenticatedWriteLimitPer5Min: number;
  /** ARN of the API Gateway stage to protect. */
  stageArn: string;
}

const RATE_LIMITED_BODY_KEY = 'rate-limited';
const RATE_LIMITED_BODY = JSON.stringify({
  error: { code: 'RATE_LIMITED', message: 'Too many requests; slow down' },
});

/**
 * A small regional web ACL: a rate-based rule on the credential-guessing routes and one per IP
 * over the whole API, both answering 429 in the service's envelope, and the AWS common rule set in count mode for visibility.
 */
export class RateLimitWebAcl extends Construct {
  readonly webAcl: wafv2.CfnWebACL;

  constructor(scope: Construct, id: string, props: RateLimitWebAclProps) {
    super(scope, id);
    const rules: wafv2.CfnWebACL.RuleProperty[] = [];
    if (props.rateLimitedRoutes.length > 0) {
      const routeMatches = props.rateLimitedRoutes.map(routeMatch);
      rules.push({
        name: 'rate-limit-sign-in-and-tokens',
        priority: 0,
        action: {
          block: { customResponse: { responseCode: 429, customResponseBodyKey: RATE_LIMITED_BODY_KEY } },
        },
        statement: {
          rateBasedStatement: {
            aggregateKeyType: 'IP',
            limit: props.limitPer5Min,
            evaluationWindowSec: 300,
            scopeDownStatement: routeMatches.length === 1 ? routeMatches[0] : { orStatement: { statements: routeMatches } },
          },
        },
        visibilityConfig: visibility('rate-limit-sign-in-and-tokens'),
      });
    }
    // Every request, whatever its path: rate-based rules count per IP over the window
    // (https://docs.aws.amazon.com/waf/latest/developerguide/waf-rule-statement-type-rate-based.html).
    rules.push({
      name: 'rate-limit-whole-api',
      priority: 1,
      action: {
        block: { customResponse: { responseCode: 429, customResponseBodyKey: RATE_LIMITED_BODY_KEY } },
      },
      statement: { rateBasedStatement: { aggregateKeyType: 'IP', limit: props.apiLimitPer5Min, evaluationWindowSec: 300 } },
      visibilityConfig: visibility('rate-limit-whole-api'),
    });
    if (props.unauthenticatedWriteRoutes.length > 0) {
      const routeMatches = props.unauthenticatedWriteRoutes.map(routeMatch);
      rules.push({
        name: 'rate-limit-unauthenticated-writes',
        priority: 2,
        action: {
          block: { customResponse: { responseCode: 429, customResponseBodyKey: RATE_LIMITED_BODY_KEY } },
        },
        statement: {
          rateBasedStatement: {
            aggregateKeyType: 'IP',
            limit: props.unauthenticatedWriteLimitPer5Min,
            evaluationWindowSec: 300,
            scopeDownStatement: routeMatches.length === 1 ? routeMatches[0] : { orStatement: { statements: routeMatches } },
          },
        },
        visibilityConfig: visibility('rate-limit-unauthenticated-writes'),
      });
    }
    rules.push({
      name: 'aws-common-rule-set',
      priority: 3,
      // Counted, not enforced: a managed-rule block would reach clients as WAF_FILTERED, which the
      // API answers as RATE_LIMITED, and these rules misfire on OAuth inputs (below).
      overrideAction: { count: {} },
      statement: {
        managedRuleGroupStatement: {
          vendorName: 'AWS',
          name: 'AWSManagedRulesCommonRuleSet',
          // Kept at count even if the group is ever enforced: bodies up to 16 KiB are valid (the
          // rule stops at 8 KB), and loopback redirect URIs (http://127.0.0.1/...) look like RFI.
          ruleActionOverrides: ['SizeRestrictions_BODY', 'GenericRFI_BODY', 'GenericRFI_QUERYARGUMENTS'].map((name) => ({
            name,
            actionToUse: { count: {} },
          })),
        },
      },
      visibilityConfig: visibility('aws-common-rule-set'),
    });

    this.webAcl = new wafv2.CfnWebACL(this, 'WebAcl', {
      scope: 'REGIONAL',
      defaultAction: { allow: {} },
      customResponseBodies: {
        [RATE_LIMITED_BODY_KEY]: { contentType: 'APPLICATION_JSON', content: RATE_LIMITED_BODY },
      },
      rules,
      visibilityConfig: visibility('container-hosting-api'),
    });
    new wafv2.CfnWebACLAssociation(this, 'StageAssociation', {
      resourceArn: props.stageArn,
      webAclArn: this.webAcl.attrArn,
    });
  }
}

function visibility(metricName: string): wafv2.CfnWebACL.VisibilityConfigProperty {
  return { cloudWatchMetricsEnabled: true, metricName, sampledRequestsEnabled: true };
}

/**
 * Matches the end of the URL-decoded URI path: on the execute-api endpoint the path starts with
 * the stage name (/prod/login), behind a custom domain it does not (/login), and a trailing
 * slash or a percent-encoded letter must not slip past the limit.
 */
function pathPattern(path: string): string {
  const segments = path.split('/').map((segment) => (segment.startsWith('{') ? '[^/]+' : segment.replace(/[.*+?^$()|[\]\\{}]/g, '\\$&')));
  return `${segments.join('/')}/?$`;
}

function routeMatch(route: RateLimitedRoute): wafv2.CfnWebACL.StatementProperty {
  return {
    andStatement: {
      statements: [
        {
          byteMatchStatement: {
            fieldToMatch: { method: {} },
            searchString: route.method,
            positionalConstraint: 'EXACTLY',
            textTransformations: [{ priority: 0, type: 'NONE' }],
          },
        },
        {
          regexMatchStatement: {
            fieldToMatch: { uriPath: {} },
            regexString: pathPattern(route.path),
            textTransformations: [{ priority: 0, type: 'URL_DECODE' }],
          },
        },
      ],
    },
  };
}
