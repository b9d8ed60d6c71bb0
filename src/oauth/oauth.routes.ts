/**
 * The OAuth 2.1 authorization server for MCP clients, at the root of this origin
 * (docs/decisions/0011-oauth-sign-in.md): the metadata (RFC 8414, RFC 9728), registration
 * (RFC 7591, or a client metadata document: ./client-metadata.ts), /authorize, /token and
 * /revoke (RFC 7009). The MCP SDK's handlers parse and answer
 * the protocol messages (PKCE S256 included); the provider (./oauth.provider.ts) answers them with this
 * service's rules (src/oauth/oauth.service.ts). The person's consent is a page of the web
 * application (src/web/consent.pages.ts): /authorize records the request and sends the browser there.
 */
import { ipKeyGenerator } from 'express-rate-limit';
import { json, Router, urlencoded, type ErrorRequestHandler, type Request, type Response } from 'express';
import type { MikroORM } from '@mikro-orm/postgresql';
import { authorizationHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/authorize.js';
import { tokenHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/token.js';
import { clientRegistrationHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/register.js';
import { revocationHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/revoke.js';
import { metadataHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/metadata.js';
import { SCOPE_IDS } from '../kernel/scopes.js';
import { MCP_SCOPES } from '../kernel/contract.js';
import { parseCookies } from '../kernel/cookies.js';
import type { Store } from 'express-rate-limit';
import { SESSION_COOKIE } from '../sessions/sessions.service.js';
import type { MetadataFetchPolicy } from './client-metadata.js';
import { oauthProvider, type OAuthSite } from './oauth.provider.js';
import type { Logger } from '../kernel/logger.js';
import { authorizationProblem } from './oauth.service.js';

/**
 * The site, or why OAuth sign-in is off: an issuer must be https (a loopback address may be
 * http, for development), at the root of its origin (the metadata lives at the root).
 */
export function oauthSite(publicUrl: string, apiBase: string): OAuthSite | { off: string } {
  const url = new URL(publicUrl);
  const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
  if (url.protocol !== 'https:' && !loopback)
    return {
      off: `PUBLIC_URL is ${url.protocol} to another machine; OAuth needs https (a loopback address may be http)`,
    };
  if (url.pathname !== '/')
    return { off: 'PUBLIC_URL has a path; OAuth metadata must be served at the root of the origin' };
  const issuer = url.origin;
  const mcpUrl = `${issuer}${apiBase}/mcp`;
  return {
    issuer,
    mcpUrl,
    mcpResourceMetadata: `${issuer}/.well-known/oauth-protected-resource${apiBase}/mcp`,
    apiResourceMetadata: `${issuer}/.well-known/oauth-protected-resource`,
    resources: [mcpUrl, `${issuer}${apiBase}`, issuer],
    consentPath: '/oauth/consent',
  };
}

/** What is wrong with a token request's form, before the SDK's handler reads it, if anything. */
function tokenRequestProblem(body: unknown): { code: string; message: string } | undefined {
  if (!body || typeof body !== 'object')
    return { code: 'invalid_request', message: 'Send the token request as application/x-www-form-urlencoded.' };
  const form = body as Record<string, unknown>;
  if (form.grant_type === undefined)
    return { code: 'invalid_request', message: 'grant_type is required: authorization_code.' };
  if (form.grant_type !== 'authorization_code')
    return {
      code: 'unsupported_grant_type',
      message:
        'This server grants authorization_code only, and issues no refresh tokens: sign in again when a key expires.',
    };
  for (const [name, what] of [
    ['client_id', 'the client_id the client registered with'],
    ['code', 'the code the redirect carried'],
    ['code_verifier', 'the PKCE verifier whose SHA-256 was the code_challenge'],
  ] as const)
    if (typeof form[name] !== 'string') return { code: 'invalid_request', message: `${name} is required: ${what}.` };
  return undefined;
}

/** What is wrong with a registration's essentials, before the SDK's handler reads it, if anything. */
function registrationProblem(body: unknown): { code: string; message: string } | undefined {
  if (!body || typeof body !== 'object' || Array.isArray(body))
    return { code: 'invalid_client_metadata', message: 'Send the registration as a JSON object (application/json).' };
  const doc = body as Record<string, unknown>;
  const uris = doc.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0 || uris.some((u) => typeof u !== 'string'))
    return { code: 'invalid_client_metadata', message: 'redirect_uris is required: a list of 1 to 10 URIs.' };
  for (const name of ['client_name', 'client_uri', 'token_endpoint_auth_method', 'scope'] as const)
    if (doc[name] !== undefined && typeof doc[name] !== 'string')
      return { code: 'invalid_client_metadata', message: `${name}: a string, if given.` };
  for (const name of ['grant_types', 'response_types'] as const) {
    const list = doc[name];
    if (list !== undefined && (!Array.isArray(list) || list.some((v) => typeof v !== 'string')))
      return { code: 'invalid_client_metadata', message: `${name}: a list of strings, if given.` };
  }
  return undefined;
}

/** An OAuth error response (RFC 6749 §5.2), never cached. */
function oauthError(res: Response, status: number, refusal: { code: string; message: string }): void {
  res.status(status).set('Cache-Control', 'no-store').json({ error: refusal.code, error_description: refusal.message });
}

export function oauthRouter(deps: {
  orm: MikroORM;
  site: OAuthSite;
  log: Logger;
  /** Registrations one address may make an hour. */
  registrationsPerHour: number;
  /** How client metadata documents may be fetched (tests only: from this machine). */
  clientMetadata?: MetadataFetchPolicy;
  /** The longest a key may last (KEY_MAX_DAYS). */
  keyMaxDays?: number;
  /** Where the handlers' own limiters count, by endpoint: the shared budgets (Redis when there is one). */
  limitStore: (endpoint: string) => Store;
}): Router {
  const { site } = deps;
  const scopes = [...SCOPE_IDS];
  const provider = oauthProvider(deps);

  const metadata = {
    issuer: site.issuer,
    authorization_endpoint: `${site.issuer}/authorize`,
    token_endpoint: `${site.issuer}/token`,
    registration_endpoint: `${site.issuer}/register`,
    revocation_endpoint: `${site.issuer}/revoke`,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none'],
    revocation_endpoint_auth_methods_supported: ['none'],
    scopes_supported: scopes,
    authorization_response_iss_parameter_supported: true,
    client_id_metadata_document_supported: true,
    service_documentation: `${site.issuer}/docs`,
  };
  // The MCP endpoint lists the scopes its tools use (a client that asks for all it lists then asks
  // for only those); the API, every scope.
  const resource = (url: string, supported: readonly string[]) => ({
    resource: url,
    authorization_servers: [site.issuer],
    scopes_supported: [...supported],
    bearer_methods_supported: ['header'],
    resource_name: 'Shipyard',
    resource_documentation: `${site.issuer}/docs`,
  });

  const shared = deps.limitStore;
  const router = Router();
  router.use('/.well-known/oauth-authorization-server', metadataHandler(metadata));
  router.use(new URL(site.mcpResourceMetadata).pathname, metadataHandler(resource(site.mcpUrl, MCP_SCOPES)));
  router.use(new URL(site.apiResourceMetadata).pathname, metadataHandler(resource(site.issuer, scopes)));
  router.use('/authorize', urlencoded({ extended: false, limit: '16kb' }), (req, res, next) => {
    const params = (req.method === 'POST' ? req.body : req.query) as Record<string, unknown>;
    const refusal = authorizationProblem(params ?? {}, site.resources);
    if (refusal) return oauthError(res, 400, refusal);
    // Every key is made on the consent screen, so a request that may not show it cannot succeed.
    // Answered here, not redirected: registration is open, and an automatic redirect to any
    // registered URI would make this an open redirector (RFC 9700 §4.11.2).
    if (typeof params.prompt === 'string' && params.prompt.split(' ').includes('none')) {
      const signedIn = SESSION_COOKIE in parseCookies(req.headers.cookie);
      return oauthError(
        res,
        400,
        signedIn
          ? {
              code: 'consent_required',
              message:
                'Every sign-in here is approved by the person on the consent screen: send the request without prompt=none.',
            }
          : {
              code: 'login_required',
              message:
                'The person is not signed in, and every sign-in here is approved on the consent screen: send the request without prompt=none.',
            },
      );
    }
    next();
  });
  router.use('/authorize', authorizationHandler({ provider, rateLimit: { store: shared('authorize') } }));
  // The SDK's handlers answer a malformed request with their schema library's dump: the common
  // mistakes are answered first, in a sentence (RFC 6749 §5.2, RFC 7591 §3.2.2).
  router.post('/token', urlencoded({ extended: false, limit: '16kb' }), (req, res, next) => {
    const refusal = tokenRequestProblem(req.is('application/x-www-form-urlencoded') ? req.body : undefined);
    if (refusal) return oauthError(res, 400, refusal);
    next();
  });
  router.post('/register', json({ limit: '100kb' }), (req, res, next) => {
    const refusal = registrationProblem(req.is('application/json') ? req.body : undefined);
    if (refusal) return oauthError(res, 400, refusal);
    next();
  });
  // Token and revocation requests are counted per client (hosted connectors exchange codes for
  // many people from a few addresses); registrations, which make clients, per address.
  const perClient = {
    keyGenerator: (req: Request) => {
      const clientId = (req.body as { client_id?: unknown } | undefined)?.client_id;
      return typeof clientId === 'string' ? `client:${clientId.slice(0, 2000)}` : ipKeyGenerator(req.ip ?? '');
    },
  };
  router.use('/token', tokenHandler({ provider, rateLimit: { ...perClient, store: shared('token') } }));
  router.use(
    '/register',
    clientRegistrationHandler({
      clientsStore: provider.clientsStore,
      rateLimit: { windowMs: 3_600_000, limit: deps.registrationsPerHour, store: shared('register') },
    }),
  );
  router.use('/revoke', revocationHandler({ provider, rateLimit: { ...perClient, store: shared('revoke') } }));
  // A body that cannot be read (not JSON, too large, another charset) is an OAuth error here too.
  const paths = ['/authorize', '/token', '/register', '/revoke'];
  router.use(paths, ((err, _req, res, next) => {
    const status = (err as { status?: number }).status;
    if (res.headersSent || typeof status !== 'number' || status < 400 || status >= 500) return next(err);
    oauthError(res, status, {
      code: 'invalid_request',
      message: 'The request body could not be read as this endpoint takes it.',
    });
  }) as ErrorRequestHandler);
  return router;
}
