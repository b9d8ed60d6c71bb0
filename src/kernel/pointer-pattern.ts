/**
 * The patterns docs/api-changes.md names parts of the contract with (its Breaking and Deprecated
 * lists): a JSON Pointer in which `*` stands for one segment and `**` for any number, e.g.
 * `/paths/~1projects/get` or `/paths/**\/requestBody/**\/pattern`.
 */
export function pointerPattern(pattern: string): RegExp {
  const segments = pattern.replace(/^\//, '').split('/');
  const body = segments
    .map((seg) =>
      seg === '**' ? '(?:/[^/]+)*' : seg === '*' ? '/[^/]+' : `/${seg.replace(/[.+?^${}()|[\]\\]/g, '\\$&')}`,
    )
    .join('');
  return new RegExp(`^${body}$`);
}

/** The JSON Pointer of an operation in the contract: `/paths/~1projects~1{projectId}/get`. */
export const operationPointer = (path: string, method: string): string =>
  `/paths/${path.replaceAll('~', '~0').replaceAll('/', '~1')}/${method}`;
