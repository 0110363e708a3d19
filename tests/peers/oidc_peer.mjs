// A certified OpenID provider (panva/oidc-provider) shaped like the real service (Auth0).
// Started by tests/helpers/fixtures_auth.py: listens on 127.0.0.1, port 0 unless PORT is set, and prints one
// JSON line {"ready": true, "issuer": ..., "port": ...} to stdout once it accepts connections.
import http from 'node:http';
import Provider, { errors } from 'oidc-provider';

const server = http.createServer();
await new Promise((resolve) => server.listen(Number(process.env.PORT || 0), '127.0.0.1', resolve));
const { port } = server.address();
const base = `http://127.0.0.1:${port}`;
const API = `${base}/api/v2/`;  // Auth0-style audience
const idTokenTTL = Number(process.env.ID_TOKEN_TTL || 3600);

const provider = new Provider(base, {
  clients: [
    {
      client_id: 'desktop-app', application_type: 'native', token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'],
      redirect_uris: ['http://127.0.0.1/callback'], post_logout_redirect_uris: ['http://127.0.0.1/logged-out'],
    },
    {
      // Negative fixture: a confidential client whose ID tokens are HS256, which clients must reject.
      client_id: 'hs256-app', client_secret: 'hs256-secret-hs256-secret-hs256-secret-0123456789',
      application_type: 'native', token_endpoint_auth_method: 'none',
      id_token_signed_response_alg: 'HS256',
      grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'],
      redirect_uris: ['http://127.0.0.1/callback'],
    },
  ],
  routes: {
    authorization: '/authorize', token: '/oauth/token', userinfo: '/userinfo',
    jwks: '/.well-known/jwks.json', revocation: '/oauth/revoke', end_session: '/oidc/logout',
  },
  scopes: ['openid', 'offline_access', 'profile', 'email'],
  claims: { openid: ['sub'], profile: ['name', 'nickname', 'picture'], email: ['email', 'email_verified'] },
  findAccount: async (ctx, id) => ({
    accountId: id,
    claims: async () => ({ sub: id, name: `Peer ${id}`, email: `${id}@example.test`, email_verified: true }),
  }),
  extraParams: ['audience'],
  pkce: { required: () => true },
  ttl: { IdToken: idTokenTTL, AccessToken: 300, AuthorizationCode: 60, RefreshToken: 86400, Interaction: 600, Session: 3600, Grant: 86400 },
  rotateRefreshToken: true,
  enabledJWA: { idTokenSigningAlgValues: ['RS256', 'HS256'] },
  features: {
    devInteractions: { enabled: true },
    revocation: { enabled: true },
    rpInitiatedLogout: { enabled: true },
    resourceIndicators: {
      enabled: true,
      useGrantedResource: async () => true,
      defaultResource: async (ctx, client, oneOf) => (oneOf ? oneOf[0] : ctx.oidc.params?.audience),
      getResourceServerInfo: async (ctx, resource) => {
        if (resource !== API) throw new errors.InvalidTarget();
        return { scope: 'read:events', audience: API, accessTokenFormat: 'jwt', accessTokenTTL: 300 };
      },
    },
  },
});
server.on('request', provider.callback());
process.stdout.write(JSON.stringify({ ready: true, issuer: base, port }) + '\n');
const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
