/**
 * What an MCP client keeps between the steps of an OAuth sign-in: an in-memory
 * OAuthClientProvider for the MCP SDK client's `auth()`, registering by DCR, or by its metadata
 * document when given `clientMetadataUrl`.
 */
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';

export class Agent implements OAuthClientProvider {
  client?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier = '';
  authorizationUrl?: URL;
  readonly name: string;
  readonly clientMetadataUrl?: string;
  readonly #redirect: () => string;
  /** `redirect`: the client's redirect URI, or a function giving it (a listener's, known later). */
  constructor(opts: { redirect: string | (() => string); name?: string; clientMetadataUrl?: string }) {
    const { redirect } = opts;
    this.#redirect = typeof redirect === 'string' ? () => redirect : redirect;
    this.name = opts.name ?? 'Test agent';
    this.clientMetadataUrl = opts.clientMetadataUrl;
  }
  get redirectUrl() {
    return this.#redirect();
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.name,
      redirect_uris: [this.#redirect()],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.client = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
}
