/**
 * Matches request paths against API Gateway path templates (`/api/v1/tokens/{token_id}`),
 * choosing a resource the way API Gateway does: literal segments win over `{param}`,
 * which wins over a greedy `{param+}`. A trailing slash is a different path and does not match.
 */

export interface RouteLike {
  method: string;
  path: string;
}

export type RouteMatch<R extends RouteLike> =
  | { kind: 'matched'; route: R; pathParameters: Record<string, string> | null }
  | { kind: 'method-not-allowed'; allowedMethods: string[] }
  | { kind: 'not-found' };

interface CompiledTemplate {
  template: string;
  pattern: RegExp;
  parameterNames: string[];
  /** One rank per segment: 0 literal, 1 `{param}`, 2 `{param+}`; lower is more specific. */
  specificity: number[];
}

const parameterSegment = /^\{([A-Za-z0-9_]+)(\+?)\}$/;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

export function compilePathTemplate(template: string): CompiledTemplate {
  const parameterNames: string[] = [];
  const specificity: number[] = [];
  const segments = template.split('/').slice(1);
  const source = segments
    .map((segment) => {
      const parameter = parameterSegment.exec(segment);
      if (!parameter) {
        specificity.push(0);
        return escapeRegExp(segment);
      }
      parameterNames.push(parameter[1]!);
      const greedy = parameter[2] === '+';
      specificity.push(greedy ? 2 : 1);
      return greedy ? '(.+)' : '([^/]+)';
    })
    .join('/');
  return { template, pattern: new RegExp(`^/${source}$`), parameterNames, specificity };
}

function compareSpecificity(a: CompiledTemplate, b: CompiledTemplate): number {
  const length = Math.max(a.specificity.length, b.specificity.length);
  for (let index = 0; index < length; index += 1) {
    const difference = (a.specificity[index] ?? -1) - (b.specificity[index] ?? -1);
    if (difference !== 0) return difference;
  }
  return 0;
}

function decodeSegment(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/** Compiles the templates once; the returned function matches a method and a raw (still encoded) path. */
export function createRouteMatcher<R extends RouteLike>(routes: readonly R[]): (method: string, rawPath: string) => RouteMatch<R> {
  const routesByTemplate = new Map<string, R[]>();
  for (const route of routes) {
    const sameResource = routesByTemplate.get(route.path) ?? [];
    sameResource.push(route);
    routesByTemplate.set(route.path, sameResource);
  }
  const templates = [...routesByTemplate.keys()].map(compilePathTemplate).sort(compareSpecificity);

  return (method, rawPath) => {
    for (const template of templates) {
      const match = template.pattern.exec(rawPath);
      if (!match) continue;
      const candidates = routesByTemplate.get(template.template) ?? [];
      const route = candidates.find((candidate) => candidate.method === method.toUpperCase());
      if (!route) {
        return { kind: 'method-not-allowed', allowedMethods: candidates.map((candidate) => candidate.method) };
      }
      const pathParameters =
        template.parameterNames.length === 0
          ? null
          : Object.fromEntries(template.parameterNames.map((name, index) => [name, decodeSegment(match[index + 1]!)]));
      return { kind: 'matched', route, pathParameters };
    }
    return { kind: 'not-found' };
  };
}
