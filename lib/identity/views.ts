import type { IssuedPersonalAccessToken, SignedInSession } from './identity-service.js';
import type { PersonalAccessToken, User } from './identity-store.js';

/** The public JSON shapes of identity resources (docs/api-rules.md). */
export const userView = (user: User) => ({
  id: user.id,
  email: user.email,
  role: user.role,
  created_at: user.createdAt,
  status: user.status,
  must_change_password: user.mustChangePassword,
});

export const sessionView = (session: SignedInSession) => ({
  token: session.token,
  csrf_token: session.csrfToken,
  expires_at: session.expiresAt,
  user: userView(session.user),
});

export const personalAccessTokenView = (token: PersonalAccessToken) => ({
  id: token.id,
  name: token.name,
  created_at: token.createdAt,
  expires_at: token.expiresAt,
  last_used_at: token.lastUsedAt,
  scopes: token.scopes,
  parent_id: token.parentId,
});

export const issuedPersonalAccessTokenView = (token: IssuedPersonalAccessToken) => ({
  id: token.id,
  name: token.name,
  token: token.token,
  created_at: token.createdAt,
  expires_at: token.expiresAt,
  scopes: token.scopes,
  parent_id: token.parentId,
});
