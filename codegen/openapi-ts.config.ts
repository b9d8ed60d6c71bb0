// How the contract becomes code: types, zod schemas and a fetch SDK, from the bundled spec.
// Output under codegen/generated/api is committed and never edited; `make check-codegen`
// regenerates it and fails on any difference.
import { defineConfig } from '@hey-api/openapi-ts';

export default defineConfig({
  input: './codegen/generated/openapi.json',
  output: { path: './codegen/generated/api', module: { extension: '.js' } },
  parser: {
    patch: {
      // hey-api drops x-* extensions; carry the scope into the SDK's JSDoc for integrators.
      operations: (_method, _path, op) => {
        const o = op as { description?: string; 'x-required-scope'?: string; 'x-session-only'?: boolean };
        const note = o['x-required-scope']
          ? `Required scope: \`${o['x-required-scope']}\``
          : o['x-session-only']
            ? 'Session only: API keys are refused.'
            : undefined;
        if (note) o.description = `${o.description ?? ''}\n\n${note}`.trim();
      },
    },
  },
  plugins: [
    '@hey-api/client-fetch',
    '@hey-api/typescript',
    { name: '@hey-api/sdk', validator: { request: false, response: false } },
    { name: 'zod', compatibilityVersion: 4, dates: { offset: true }, metadata: true },
  ],
});
