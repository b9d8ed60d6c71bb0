import YAML from 'yaml';
import type { SomeHandlers } from './kit/handler.js';
import type { OpenApiDocument } from '../kernel/contract.js';

/** The spec document itself: public, no key. */
export function metaHandlers(doc: OpenApiDocument) {
  const yaml = YAML.stringify(doc, { aliasDuplicateObjects: false });
  return {
    getOpenApiJson: async () => ({ status: 200, body: doc as never }),
    getOpenApiYaml: async () => ({ status: 200, text: yaml, contentType: 'application/yaml' }),
  } satisfies SomeHandlers<'getOpenApiJson' | 'getOpenApiYaml'>;
}
