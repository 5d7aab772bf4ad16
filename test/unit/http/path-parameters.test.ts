import { describe, expect, it } from 'vitest';
import { pathIdOf } from '../../../lib/http/path-parameters.js';

const documentUrl = 'https://agent.example/.well-known/client.json';

describe('an id in the path', () => {
  it('names a resource by UUID, and nothing else, unless the resource is named by a client_id', () => {
    expect(pathIdOf('container_id', '0190c5a1-0000-7000-8000-000000000000')).toBe('0190c5a1-0000-7000-8000-000000000000');
    expect(pathIdOf('container_id', documentUrl)).toBeUndefined();
    expect(pathIdOf('container_id', '../tokens')).toBeUndefined();
  });

  it('takes a client metadata document URL for an authorization, decoded (local server) or still percent-encoded (API Gateway)', () => {
    expect(pathIdOf('authorization_id', documentUrl)).toBe(documentUrl);
    expect(pathIdOf('authorization_id', encodeURIComponent(documentUrl))).toBe(documentUrl);
    expect(pathIdOf('authorization_id', 'http://agent.example/client.json')).toBeUndefined();
    expect(pathIdOf('authorization_id', '%E0%A4%A')).toBeUndefined();
  });
});
