/**
 * The OAuth server provider the MCP SDK's handlers call (its `OAuthServerProvider` interface):
 * each of its answers is this service's rule (src/oauth/oauth.service.ts) in the SDK's terms. The
 * routes (./oauth.routes.ts) mount the handlers with it; the consent page that approves a request
 * is the web application's (src/web/consent.pages.ts).
 */
import type { Response } from 'express';
import type { MikroORM } from '@mikro-orm/postgresql';
import {
  InvalidGrantError,
  InvalidTokenError,
  OAUTH_ERRORS,
  TemporarilyUnavailableError,
} from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { OAuthServerProvider } from '@modelcontextprotocol/sdk/server/auth/provider.js';
import type { OAuthClientInformationFull } from '@modelcontextprotocol/sdk/shared/auth.js';
import { parseCookies } from '../kernel/cookies.js';
import { ProblemError } from '../kernel/problem.js';
import type { Logger } from '../kernel/logger.js';
import { inSpan } from '../telemetry/telemetry.js';
import { isDatabaseUnavailable } from '../db/unavailable.js';
import { hashToken } from '../keys/tokens.js';
import { ApiKey } from '../keys/api-key.entity.js';
import { keyStatus } from '../keys/keys.service.js';
import { ClientMetadataDocuments, type MetadataFetchPolicy } from './client-metadata.js';
import {
  beginGrant,
  browserBinding,
  browserCookie,
  codeChallenge,
  exchangeCode,
  findClient,
  GRANT_MINUTES,
  OAuthRefusal,
  registerClient,
  revokeClientKey,
} from './oauth.service.js';

/** Where this server's OAuth lives, derived from PUBLIC_URL. */
export type OAuthSite = {
  /** The authorization server's issuer: the bare origin. */
  issuer: string;
  /** The MCP endpoint, the resource MCP clients ask a key for. */
  mcpUrl: string;
  /** The metadata (RFC 9728) each kind of 401 names in `resource_metadata`. */
  mcpResourceMetadata: string;
  apiResourceMetadata: string;
  /** Every resource (RFC 8707) a key may be asked for: it is one key for the MCP endpoint and the API. */
  resources: string[];
  /** The consent page of the web application. */
  consentPath: string;
};

/**
 * An OAuthRefusal or ProblemError as the OAuth error the SDK's handlers answer with. Anything else
 * they would answer as a bare `server_error` and never log: it is logged here first.
 */
async function inOAuthTerms<T>(log: Logger, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof OAuthRefusal) {
      const Kind = OAUTH_ERRORS[err.code];
      throw Kind ? new Kind(err.message) : new InvalidGrantError(err.message);
    }
    if ((err instanceof ProblemError && err.status === 503) || isDatabaseUnavailable(err))
      throw new TemporarilyUnavailableError('The database is out of reach for a moment; try again shortly.');
    log.error('OAuth request failed', { error: err });
    throw err;
  }
}

/** The API reference's "Authorize" (src/web/docs.page.ts): this site's own public client. */
const REFERENCE_CLIENT_ID = 'shipyard-reference';
const referenceClient = (site: OAuthSite) => ({
  client_id: REFERENCE_CLIENT_ID,
  client_name: 'The Shipyard API reference (/docs)',
  redirect_uris: [`${site.issuer}/docs/oauth-callback`],
  grant_types: ['authorization_code'],
  response_types: ['code'],
  token_endpoint_auth_method: 'none',
});

/** The SDK's provider over this service's OAuth rules. */
export function oauthProvider(deps: {
  orm: MikroORM;
  site: OAuthSite;
  log: Logger;
  /** How client metadata documents may be fetched (tests only: from this machine). */
  clientMetadata?: MetadataFetchPolicy;
  /** The longest a key may last (KEY_MAX_DAYS). */
  keyMaxDays?: number;
}): OAuthServerProvider {
  const { orm, site, log } = deps;
  const secure = site.issuer.startsWith('https:');
  const cookieName = browserCookie(secure);
  const em = () => orm.em.fork();
  const documents = new ClientMetadataDocuments(deps.clientMetadata);

  return {
    clientsStore: {
      // A client_id that is an https URL names its metadata document; the API reference's is this
      // site's own; any other was registered here.
      getClient: async (id) =>
        (id === REFERENCE_CLIENT_ID
          ? referenceClient(site)
          : id.startsWith('https://')
            ? await inOAuthTerms(log, () => documents.client(id))
            : await findClient(em(), id)) as OAuthClientInformationFull | undefined,
      registerClient: (client) =>
        inOAuthTerms(log, async () => (await registerClient(em(), client)) as OAuthClientInformationFull),
    },
    async authorize(client, params, res: Response) {
      // The browser that started the request is the only one that may answer it (RFC 9700 §4.7).
      const browser = browserBinding(parseCookies(res.req.headers.cookie)[cookieName]);
      const id = await inOAuthTerms(log, () =>
        beginGrant(
          em(),
          {
            client: client as Parameters<typeof beginGrant>[1]['client'],
            redirectUri: params.redirectUri,
            codeChallenge: params.codeChallenge,
            scopes: params.scopes ?? [],
            state: params.state,
            resource: params.resource,
            browser: browser.value,
          },
          site.resources,
        ),
      );
      // Set anew each time (its life runs from the latest request); path / so that /authorize reads it
      // back: every request this browser starts is bound to the same value.
      res.cookie(cookieName, browser.value, {
        httpOnly: true,
        // Lax: the consent page is reached by a top-level redirect from here, and answered by a same-site form.
        sameSite: 'lax',
        secure,
        path: '/',
        maxAge: GRANT_MINUTES * 60_000,
      });
      res.redirect(302, `${site.consentPath}?request=${id}`);
    },
    challengeForAuthorizationCode: (client, code) =>
      inOAuthTerms(log, () => codeChallenge(em(), client.client_id, code)),
    // The verifier is checked with the code (oauth.service.ts exchangeCode), its form included, in
    // the transaction that uses the code up.
    skipLocalPkceValidation: true,
    async exchangeAuthorizationCode(client, code, verifier, redirectUri, resource) {
      const key = await inSpan('oauth exchange', { attributes: { 'shipyard.oauth.grant': 'authorization_code' } }, () =>
        inOAuthTerms(log, () =>
          exchangeCode(em(), {
            clientId: client.client_id,
            code,
            verifier: verifier ?? '',
            redirectUri,
            resource,
            maxDays: deps.keyMaxDays,
          }),
        ),
      );
      log.info('key issued through OAuth', { clientId: client.client_id, scopes: key.scopes });
      return {
        access_token: key.token,
        token_type: 'Bearer',
        expires_in: Math.max(0, Math.floor((key.expiresAt.getTime() - Date.now()) / 1000)),
        scope: key.scopes.join(' '),
      };
    },
    async exchangeRefreshToken() {
      throw new InvalidGrantError(
        'This server issues no refresh tokens: each key lasts as long as its person chose. Sign in again when it expires.',
      );
    },
    // The MCP endpoint and the API authenticate keys themselves (src/http/authenticate.ts); this
    // answers the same question for anything that asks through the SDK's interface.
    async verifyAccessToken(token) {
      const key = token.length <= 200 ? await em().findOne(ApiKey, { tokenHash: hashToken(token) }) : null;
      if (!key || keyStatus(key) !== 'active') throw new InvalidTokenError('This key is not valid.');
      return {
        token,
        clientId: key.oauthClientId ?? `key:${key.id}`,
        scopes: key.scopes,
        expiresAt: Math.floor(key.expiresAt.getTime() / 1000),
        resource: new URL(site.mcpUrl),
      };
    },
    revokeToken: (client, request) => inOAuthTerms(log, () => revokeClientKey(em(), client.client_id, request.token)),
  };
}
